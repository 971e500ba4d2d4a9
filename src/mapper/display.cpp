#include "mapper/display.h"

#include <algorithm>
#include <unordered_map>

#include "util/text.h"

namespace gantry {
namespace {

std::string mapping_text(const MapPolicy& map, bool oversubscribe) {
    std::string text = mapping_name(map);
    text += oversubscribe ? ":OVERSUBSCRIBE" : ":NOOVERSUBSCRIBE";
    if (map.nolocal)
        text += ":NOLOCAL";
    if (map.span)
        text += ":SPAN";
    if (map.ordered)
        text += ":ORDERED";
    return text;
}

std::string binding_text(const BindPolicy& bind) {
    std::string text = binding_name(bind.to);
    if (bind.if_supported)
        text += ":IF-SUPPORTED";
    if (bind.overload.value_or(false))
        text += ":OVERLOAD-ALLOWED";
    return text;
}

std::string mapper_name(const MapPolicy& map) {
    switch (map.by) {
        case MapBy::kPpr:
            return "ppr";
        case MapBy::kSeq:
            return "seq";
        case MapBy::kRankfile:
            return "rank_file";
        default:
            return "round_robin";
    }
}

std::string ppr_text(const MapPolicy& map) {
    if (map.by != MapBy::kPpr)
        return "N/A";
    std::string level = map.ppr_level == MapBy::kDevice ? "device=" + map.device
                        : map.ppr_level == MapBy::kNode
                            ? "node"
                            : std::string(to_string(*mapped_object(map)));
    return std::to_string(map.ppr_count) + ":" + level;
}

std::string policy_lines(const JobMap& map) {
    const JobPolicy& policy = map.policy;
    std::string out;
    if (!policy.per_app) {
        const AppPolicy& app = policy.apps.front();
        out += "    Mapping policy: " + mapping_text(app.map, policy.oversubscribe) +
               "  Ranking policy: " + ranking_name(app.rank.by) +
               " Binding policy: " + binding_text(app.bind) + "\n";
    } else {
        for (std::size_t k = 0; k < policy.apps.size(); ++k) {
            const AppPolicy& app = policy.apps[k];
            out += "    App " + std::to_string(k) + ": Mapper: " + mapper_name(app.map) +
                   "  Mapping policy: " + mapping_text(app.map, policy.oversubscribe) +
                   "  Ranking policy: " + ranking_name(app.rank.by) +
                   "  Binding policy: " + binding_text(app.bind) + "\n";
        }
    }
    // The job's cpu set, ppr and PEs; per-app values are on the lines above.
    const AppPolicy& first = policy.apps.front();
    const bool job_level = !policy.per_app;
    const std::string cpu_set =
        job_level && first.map.by == MapBy::kPeList ? first.map.pe_list.str() : "N/A";
    const std::string pes = job_level && first.map.pes > 0 ? std::to_string(first.map.pes) : "N/A";
    out += "    Cpu set: " + cpu_set + "  PPR: " + (job_level ? ppr_text(first.map) : "N/A") +
           "  Cpus-per-rank: " + pes +
           "  Cpu Type: " + (first.cpus == CpuUnit::kHwthread ? "HWT" : "CORE") + "\n";
    return out;
}

std::string device_text(const Topology& topology, const std::vector<unsigned>& gpus) {
    std::string out;
    for (const unsigned g : gpus)
        out += (out.empty() ? " Device: " : ",") + topology.gpus()[g].name;
    return out;
}

}  // namespace

std::string bound_text(const Topology& topology, const IdSet& cpus, CpuUnit unit) {
    if (cpus.empty())
        return "N/A";
    std::string out;
    for (const TopoObject& package : topology.objects(ObjectType::kPackage)) {
        const IdSet inside = cpus & package.pus;
        if (inside.empty())
            continue;
        IdSet units;
        if (unit == CpuUnit::kHwthread) {
            units = inside;
        } else {
            for (const IdSet::Id pu : inside)
                if (const auto core = topology.object_of(ObjectType::kCore, pu))
                    units.insert(*core);
        }
        out += (out.empty() ? "" : " ") + std::string("package[") +
               std::to_string(package.logical) + "][" +
               (unit == CpuUnit::kHwthread ? "hwt:L" : "core:L") + units.str() + "]";
    }
    return out.empty() ? "N/A" : out;
}

// Tasks bound alike print alike: a million tasks on nodes of one topology
// have a few hundred distinct bindings, so each text is made once.
class BoundTexts {
public:
    const std::string& of(const Topology& topology, const IdSet& cpus, CpuUnit unit) {
        // Copies of a loaded topology share one hwloc handle: key on it.
        const hwloc_topology* const shared = topology.handle();
        key_.assign(reinterpret_cast<const char*>(&shared), sizeof shared);
        key_ += static_cast<char>(unit);
        for (const IdSet::Range& r : cpus.ranges())
            key_.append(reinterpret_cast<const char*>(&r), sizeof r);
        auto [it, added] = texts_.try_emplace(key_);
        if (added)
            it->second = bound_text(topology, cpus, unit);
        return it->second;
    }

private:
    std::string key_;
    std::unordered_map<std::string, std::string> texts_;
};

Json map_json(const JobMap& map) {
    Json nodes = Json::array();
    for (const Node& node : map.nodes)
        nodes.push_back(
            {{"name", node.name}, {"slots", node.slots}, {"max_slots", node.max_slots}});
    Json apps = Json::array();
    for (std::size_t k = 0; k < map.policy.apps.size(); ++k) {
        const AppPolicy& app = map.policy.apps[k];
        apps.push_back({{"app", k},
                        {"tasks", k < map.app_sizes.size() ? map.app_sizes[k] : 0},
                        {"mapping", mapping_text(app.map, map.policy.oversubscribe)},
                        {"ranking", ranking_name(app.rank.by)},
                        {"binding", binding_text(app.bind)},
                        {"cpu_type", app.cpus == CpuUnit::kHwthread ? "HWT" : "CORE"}});
    }
    Json tasks = Json::array();
    for (const Task& task : map.tasks) {
        Json gpus = Json::array();
        for (const unsigned g : task.gpus)
            gpus.push_back(map.nodes[task.node].topology.gpus()[g].name);
        tasks.push_back({{"rank", task.rank},
                         {"app", task.app},
                         {"app_rank", task.app_rank},
                         {"node", map.nodes[task.node].name},
                         {"local_rank", task.local_rank},
                         {"node_rank", task.node_rank},
                         {"cpus", task.cpus.str()},
                         {"cpus_os", task.cpus_os.str()},
                         {"gpus", std::move(gpus)}});
    }
    return {{"nodes", std::move(nodes)},
            {"oversubscribe", map.policy.oversubscribe},
            {"apps", std::move(apps)},
            {"tasks", std::move(tasks)}};
}

namespace {

// A node's tasks often share a cpuset: encode it once per run.
struct CpusetText {
    const IdSet* last = nullptr;
    std::string text;
    const std::string& of(const IdSet& cpus) {
        if (last == nullptr || !(*last == cpus)) {
            text = cpus.str();
            last = &cpus;
        }
        return text;
    }
};

}  // namespace

std::string map_json_text(const JobMap& map) {
    // Keys in nlohmann's (sorted) order, so both forms are byte-identical.
    std::string out = "{\"apps\":";
    out += to_compact(map_json(JobMap{{}, map.policy, map.app_sizes, {}})["apps"]);
    out += ",\"nodes\":[";
    std::vector<std::string> names;
    for (std::size_t n = 0; n < map.nodes.size(); ++n) {
        const Node& node = map.nodes[n];
        names.push_back(Json(node.name).dump());
        out += n ? ",{\"max_slots\":" : "{\"max_slots\":";
        append_number(out, node.max_slots);
        out += ",\"name\":" + names.back() + ",\"slots\":";
        append_number(out, node.slots);
        out += "}";
    }
    out += map.policy.oversubscribe ? "],\"oversubscribe\":true,\"tasks\":["
                                    : "],\"oversubscribe\":false,\"tasks\":[";
    out.reserve(out.size() + map.tasks.size() * 140);
    CpusetText cpus, cpus_os;
    for (std::size_t i = 0; i < map.tasks.size(); ++i) {
        const Task& task = map.tasks[i];
        out += i ? ",{\"app\":" : "{\"app\":";
        append_number(out, task.app);
        out += ",\"app_rank\":";
        append_number(out, task.app_rank);
        out += ",\"cpus\":\"";
        out += cpus.of(task.cpus);
        out += "\",\"cpus_os\":\"";
        out += cpus_os.of(task.cpus_os);
        out += "\",\"gpus\":[";
        for (std::size_t g = 0; g < task.gpus.size(); ++g) {
            if (g)
                out += ",";
            out += Json(map.nodes[task.node].topology.gpus()[task.gpus[g]].name).dump();
        }
        out += "],\"local_rank\":";
        append_number(out, task.local_rank);
        out += ",\"node\":";
        out += names[task.node];
        out += ",\"node_rank\":";
        append_number(out, task.node_rank);
        out += ",\"rank\":";
        append_number(out, task.rank);
        out += "}";
    }
    out += "]}";
    return out;
}

namespace {

constexpr int kCore = 28;  // a core's square, in pixels
constexpr int kGap = 4;
constexpr int kPerRow = 16;  // cores per row inside a package
constexpr int kTitle = 20;   // room for a box's title

// Ranks spread around the colour wheel by the golden angle, so that
// neighbouring ranks never look alike.
std::string rank_colour(std::uint32_t rank) {
    return "hsl(" + std::to_string((rank * 137) % 360) + ",70%,70%)";
}

std::string svg_text(int x, int y, const std::string& text, int size) {
    return "<text x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) +
           "\" font-family=\"monospace\" font-size=\"" + std::to_string(size) + "\">" + text +
           "</text>\n";
}

std::string svg_rect(int x, int y, int w, int h, const std::string& fill) {
    return "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" width=\"" +
           std::to_string(w) + "\" height=\"" + std::to_string(h) + "\" fill=\"" + fill +
           "\" stroke=\"black\"/>\n";
}

std::string xml_escaped(const std::string& text) {
    std::string out;
    for (const char c : text) {
        switch (c) {
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '&':
                out += "&amp;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

// Draws node `n` at (x, y); returns its height.
int draw_node(const JobMap& map, std::size_t n, const std::vector<const Task*>& tasks, int x, int y,
              std::string& out) {
    const Topology& topology = map.nodes[n].topology;
    std::vector<std::vector<std::uint32_t>> ranks_of_core(topology.ncores());
    for (const Task* task : tasks) {
        for (const IdSet::Id pu : task->cpus) {
            const auto core = topology.object_of(ObjectType::kCore, pu);
            if (core && (ranks_of_core[*core].empty() || ranks_of_core[*core].back() != task->rank))
                ranks_of_core[*core].push_back(task->rank);
        }
    }
    std::string body;
    int height = kTitle;
    int width = 0;
    for (const TopoObject& package : topology.objects(ObjectType::kPackage)) {
        const auto cores = topology.objects_within(ObjectType::kCore, package.pus);
        const int rows = (static_cast<int>(cores.size()) + kPerRow - 1) / kPerRow;
        const int columns = std::min<int>(kPerRow, std::max<int>(1, cores.size()));
        const int px = x + kGap;
        const int py = y + height;
        const int pw = columns * (kCore + kGap) + kGap;
        const int ph = kTitle + rows * (kCore + kGap) + kGap;
        body += svg_rect(px, py, pw, ph, "#f4f4f4");
        body += svg_text(px + kGap, py + 14, "package " + std::to_string(package.logical), 12);
        for (std::size_t i = 0; i < cores.size(); ++i) {
            const int cx = px + kGap + static_cast<int>(i % kPerRow) * (kCore + kGap);
            const int cy = py + kTitle + static_cast<int>(i / kPerRow) * (kCore + kGap);
            const auto& ranks = ranks_of_core[cores[i]];
            body += svg_rect(cx, cy, kCore, kCore, ranks.empty() ? "white" : rank_colour(ranks[0]));
            if (!ranks.empty())
                body += svg_text(cx + 3, cy + 18,
                                 std::to_string(ranks[0]) + (ranks.size() > 1 ? "+" : ""), 10);
        }
        height += ph + kGap;
        width = std::max(width, pw + 2 * kGap);
    }
    out += svg_rect(x, y, width, height, "none");
    out += svg_text(
        x + kGap, y + 15,
        xml_escaped(map.nodes[n].name) + " (" + std::to_string(tasks.size()) + " tasks)", 13);
    out += body;
    return height;
}

}  // namespace

std::string map_svg(const JobMap& map) {
    std::vector<std::vector<const Task*>> by_node(map.nodes.size());
    for (const Task& task : map.tasks)
        by_node[task.node].push_back(&task);
    std::string body;
    int y = kGap;
    for (std::size_t n = 0; n < map.nodes.size(); ++n) {
        if (by_node[n].empty())
            continue;
        y += draw_node(map, n, by_node[n], kGap, y, body) + kGap;
    }
    const int width = 2 * kGap + 2 * kGap + kPerRow * (kCore + kGap) + kGap;
    return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
           "\" height=\"" + std::to_string(y) + "\">\n" + body + "</svg>\n";
}

std::string display_bindings(const JobMap& map, const DisplayOptions& options) {
    std::string out;
    BoundTexts bound;
    for (const Task& task : map.tasks) {
        const Node& node = map.nodes[task.node];
        out += "Proc " + options.job_id + "[" + std::to_string(task.rank) + "] Node " + node.name;
        if (task.cpus.empty())
            out += " is UNBOUND\n";
        else
            out.append(" bound to ")
                .append(bound.of(node.topology, task.cpus, map.policy.apps[task.app].cpus))
                .append("\n");
    }
    return out;
}

std::string display_map(const JobMap& map, const DisplayOptions& options) {
    std::string out = "\n========================   JOB MAP   ========================\n";
    out += "Data for JOB " + options.job_id + " offset 0 Total slots allocated " +
           std::to_string(map.total_slots()) + "\n";
    out += policy_lines(map);
    out += "\n";
    std::vector<std::vector<const Task*>> by_node(map.nodes.size());
    for (const Task& task : map.tasks)
        by_node[task.node].push_back(&task);
    BoundTexts bound;
    for (std::size_t n = 0; n < map.nodes.size(); ++n) {
        if (by_node[n].empty())
            continue;
        const Node& node = map.nodes[n];
        out += "\nData for node: " + node.name + "\tNum slots: " + std::to_string(node.slots) +
               "\tMax slots: " + std::to_string(node.max_slots) +
               "\tNum procs: " + std::to_string(by_node[n].size()) + "\n";
        for (const Task* task : by_node[n]) {
            const CpuUnit unit = map.policy.apps[task->app].cpus;
            out.append("        Process jobid: ").append(options.job_id).append(" App: ");
            append_number(out, task->app);
            out.append(" Process rank: ");
            append_number(out, task->rank);
            out.append(" Bound: ").append(bound.of(node.topology, task->cpus, unit));
            if (!task->gpus.empty())
                out += device_text(node.topology, task->gpus);
            out += '\n';
        }
    }
    if (options.dry_run)
        out +=
            "\nWarning: This map has been generated without launching anything (dry run);\n"
            "the nodes were given the topologies they were told to have.\n";
    out += "\n=============================================================\n";
    return out;
}

}  // namespace gantry
