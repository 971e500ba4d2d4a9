#include "mapper/display.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "mapper/cpuset_cache.h"
#include "util/text.h"

namespace gantry {

using namespace std::string_view_literals;

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
        return texts_.get(topology.handle(), static_cast<unsigned>(unit), cpus,
                          [&] { return bound_text(topology, cpus, unit); });
    }

private:
    CpusetCache<std::string> texts_;
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

// Appends to a large text a few kilobytes at a time. A million tasks make
// two dozen pieces each; appending each to the text is a call and a check
// of its capacity, where copying a piece of known size into a small buffer
// is a few moves.
class TextAppender {
public:
    explicit TextAppender(std::string& out) : out_(out) {}
    TextAppender(const TextAppender&) = delete;
    TextAppender& operator=(const TextAppender&) = delete;
    ~TextAppender() { flush(); }

    // Inlined, so that pieces of known sizes are copied without a call.
    [[gnu::always_inline]] TextAppender& operator<<(std::string_view piece) {
        if (piece.size() > kSize - used_)
            return append_long(piece);
        std::memcpy(buffer_ + used_, piece.data(), piece.size());
        used_ += piece.size();
        return *this;
    }
    TextAppender& operator<<(char c) { return *this << std::string_view(&c, 1); }
    TextAppender& operator<<(std::uint64_t n) {
        if (kSize - used_ < kDigits)
            flush();
        used_ = static_cast<std::size_t>(std::to_chars(buffer_ + used_, buffer_ + kSize, n).ptr -
                                         buffer_);
        return *this;
    }
    void flush() {
        out_.append(buffer_, used_);
        used_ = 0;
    }

private:
    // Out of line: the inlined common case stays small.
    [[gnu::noinline]] TextAppender& append_long(std::string_view piece) {
        flush();
        if (piece.size() > kSize)
            out_.append(piece);
        else
            *this << piece;
        return *this;
    }

    static constexpr std::size_t kSize = 8192;
    static constexpr std::size_t kDigits = 20;  // 2^64 - 1 has 20
    std::string& out_;
    char buffer_[kSize];
    std::size_t used_ = 0;
};

// The idset text of a cpuset, made once per distinct cpuset.
class CpusetTexts {
public:
    const std::string& of(const IdSet& cpus) {
        return texts_.get(nullptr, 0, cpus, [&] { return cpus.str(); });
    }

private:
    CpusetCache<std::string> texts_;
};

}  // namespace

std::string map_json_text(const JobMap& map) {
    // Keys in nlohmann's (sorted) order, so both forms are byte-identical.
    std::string out = "{\"apps\":";
    out += to_compact(map_json(JobMap{{}, map.policy, map.app_sizes, {}})["apps"]);
    out += ",\"nodes\":[";
    std::vector<std::string> names;
    std::size_t longest_name = 0;
    for (std::size_t n = 0; n < map.nodes.size(); ++n) {
        const Node& node = map.nodes[n];
        names.push_back(Json(node.name).dump());
        longest_name = std::max(longest_name, names.back().size());
        out += n ? ",{\"max_slots\":" : "{\"max_slots\":";
        append_number(out, node.max_slots);
        out += ",\"name\":" + names.back() + ",\"slots\":";
        append_number(out, node.slots);
        out += "}";
    }
    out += map.policy.oversubscribe ? "],\"oversubscribe\":true,\"tasks\":["
                                    : "],\"oversubscribe\":false,\"tasks\":[";
    // Room for every task with its numbers at their widest and cpusets of up
    // to 24 characters, so that the text is never copied to grow: pages
    // reserved and never written cost no memory.
    const std::size_t widest = std::to_string(map.tasks.size()).size();
    out.reserve(out.size() + map.tasks.size() * (100 + 5 * widest + longest_name + 2 * 24));
    CpusetTexts cpus, cpus_os;
    {
        TextAppender text(out);
        for (std::size_t i = 0; i < map.tasks.size(); ++i) {
            const Task& task = map.tasks[i];
            // OS indices are often the logical ones: no second lookup then.
            const bool same = std::ranges::equal(task.cpus_os.ranges(), task.cpus.ranges());
            const std::string& cpus_text = cpus.of(task.cpus);
            text << (i ? ",{\"app\":"sv : "{\"app\":"sv) << std::uint64_t{task.app}
                 << ",\"app_rank\":"sv << std::uint64_t{task.app_rank} << ",\"cpus\":\""sv
                 << cpus_text << "\",\"cpus_os\":\""sv
                 << (same ? cpus_text : cpus_os.of(task.cpus_os)) << "\",\"gpus\":["sv;
            for (std::size_t g = 0; g < task.gpus.size(); ++g) {
                if (g)
                    text << ',';
                text << Json(map.nodes[task.node].topology.gpus()[task.gpus[g]].name).dump();
            }
            text << "],\"local_rank\":"sv << std::uint64_t{task.local_rank} << ",\"node\":"sv
                 << names[task.node] << ",\"node_rank\":"sv << std::uint64_t{task.node_rank}
                 << ",\"rank\":"sv << std::uint64_t{task.rank} << '}';
        }
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
    out +=
        svg_text(x + kGap, y + 15,
                 xml_escaped(map.nodes[n].name) + " (" + counted(tasks.size(), "task") + ")", 13);
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
    const std::string proc = "Proc " + options.job_id + "[";
    // As in display_map: room for binding texts of up to 64 characters.
    std::size_t longest_name = 0;
    for (const Node& node : map.nodes)
        longest_name = std::max(longest_name, node.name.size());
    const std::size_t widest = std::to_string(map.tasks.size()).size();
    out.reserve(map.tasks.size() * (proc.size() + widest + longest_name + 24 + 64));
    BoundTexts bound;
    {
        TextAppender text(out);
        for (const Task& task : map.tasks) {
            const Node& node = map.nodes[task.node];
            text << proc << std::uint64_t{task.rank} << "] Node "sv << node.name;
            if (task.cpus.empty())
                text << " is UNBOUND\n"sv;
            else
                text << " bound to "sv
                     << bound.of(node.topology, task.cpus, map.policy.apps[task.app].cpus) << '\n';
        }
    }
    return out;
}

std::string display_map(const JobMap& map, const DisplayOptions& options) {
    std::string out = "\n========================   JOB MAP   ========================\n";
    out += "Data for JOB " + options.job_id + " offset 0 Total slots allocated " +
           std::to_string(map.total_slots()) + "\n";
    out += policy_lines(map);
    out += "\n";
    // The tasks of each node in rank order: a counting sort by node.
    std::vector<std::size_t> first(map.nodes.size() + 1, 0);
    for (const Task& task : map.tasks)
        ++first[task.node + 1];
    for (std::size_t n = 0; n < map.nodes.size(); ++n)
        first[n + 1] += first[n];
    std::vector<const Task*> by_node(map.tasks.size());
    {
        std::vector<std::size_t> next(first.begin(), first.end() - 1);
        for (const Task& task : map.tasks)
            by_node[next[task.node]++] = &task;
    }
    // Every line of a task starts alike; binding texts of up to 64
    // characters fit in what is reserved, so that the text is never copied
    // to grow.
    const std::string process = "        Process jobid: " + options.job_id + " App: ";
    const std::size_t widest = std::to_string(map.tasks.size()).size();
    out.reserve(out.size() + map.nodes.size() * 128 +
                map.tasks.size() * (process.size() + 2 * widest + 24 + 64));
    BoundTexts bound;
    {
        TextAppender text(out);
        for (std::size_t n = 0; n < map.nodes.size(); ++n) {
            if (first[n] == first[n + 1])
                continue;
            const Node& node = map.nodes[n];
            text << "\nData for node: "sv << node.name << "\tNum slots: "sv
                 << std::uint64_t{node.slots} << "\tMax slots: "sv << std::uint64_t{node.max_slots}
                 << "\tNum procs: "sv << std::uint64_t{first[n + 1] - first[n]} << '\n';
            for (std::size_t i = first[n]; i < first[n + 1]; ++i) {
                const Task& task = *by_node[i];
                const CpuUnit unit = map.policy.apps[task.app].cpus;
                text << process << std::uint64_t{task.app} << " Process rank: "sv
                     << std::uint64_t{task.rank} << " Bound: "sv
                     << bound.of(node.topology, task.cpus, unit);
                if (!task.gpus.empty())
                    text << device_text(node.topology, task.gpus);
                text << '\n';
            }
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
