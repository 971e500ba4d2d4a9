// PRRTE's offline mapping suite (vectors/prrte-offline): every row of
// cases.tsv. Rows with a golden must print exactly the golden map after the
// README's normalisation; error rows must be refused with the quoted text in
// the message; count rows must give exactly the listed tasks per node.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "mapper/display.h"
#include "mapper/map.h"
#include "support/vectors.h"

namespace gantry {
namespace {

struct Row {
    std::string golden, topology, hosts, job_args, apps, expect, id, group, counts;
};

std::vector<std::string> split_on(const std::string& text, const std::string& separator) {
    std::vector<std::string> parts;
    for (std::size_t start = 0;;) {
        const std::size_t end = text.find(separator, start);
        parts.push_back(text.substr(start, end == std::string::npos ? end : end - start));
        if (end == std::string::npos)
            return parts;
        start = end + separator.size();
    }
}

std::vector<Row> read_cases() {
    const auto dir = *test::vectors_dir() / "prrte-offline";
    std::istringstream in(test::read_file(dir / "cases.tsv"));
    std::vector<Row> rows;
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
        const auto f = split_on(line, "\t");
        if (f.size() < 13)
            throw std::runtime_error("short row: " + line);
        rows.push_back(Row{f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[10]});
    }
    return rows;
}

std::vector<std::string> words(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string word; in >> word;)
        out.push_back(word);
    return out;
}

// Reads --map-by/--rank-by/--bind-to from a segment into `directives`;
// returns -n. Allocation arguments (--prtemca k v) are the simulator's:
// -H already names the nodes and their slots.
Result<unsigned> read_segment(const std::string& text, Directives& directives) {
    const auto w = words(text == "-" ? "" : text);
    unsigned nprocs = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
        const std::string& option = w[i];
        if (i + 1 >= w.size())
            return Error("test", "option without value: " + option);
        const std::string& value = w[++i];
        if (option == "--prtemca") {
            ++i;
        } else if (option == "-n") {
            nprocs = static_cast<unsigned>(std::stoul(value));
        } else if (option == "--map-by") {
            auto map = parse_map_by(value);
            if (!map)
                return map.error();
            directives.map = *map;
        } else if (option == "--rank-by") {
            auto rank = parse_rank_by(value);
            if (!rank)
                return rank.error();
            directives.rank = *rank;
        } else if (option == "--bind-to") {
            auto bind = parse_bind_to(value);
            if (!bind)
                return bind.error();
            directives.bind = *bind;
        } else {
            return Error("test", "unknown option " + option);
        }
    }
    return nprocs;
}

const Topology& topology(const std::string& file) {
    static std::map<std::string, Topology> loaded;
    if (auto it = loaded.find(file); it != loaded.end())
        return it->second;
    const auto path = *test::vectors_dir() / "prrte-offline" / "topologies" / file;
    auto topo = Topology::from_xml(path.string());
    if (!topo)
        throw std::runtime_error(topo.error().str());
    return loaded.emplace(file, *topo).first->second;
}

// The row's command line as gantry reads it: directives before the first
// app's -n and in the first app segment are the job's (there is no
// separator between them on the command line); later segments' are their own.
Result<JobMap> run(const Row& row) {
    JobRequest request;
    if (auto job = read_segment(row.job_args, request.directives); !job)
        return job.error();
    const auto segments = split_on(row.apps, " : ");
    for (std::size_t k = 0; k < segments.size(); ++k) {
        AppRequest app;
        auto nprocs = read_segment(segments[k], k == 0 ? request.directives : app.directives);
        if (!nprocs)
            return nprocs.error();
        app.nprocs = *nprocs;
        request.apps.push_back(std::move(app));
    }
    auto hosts = parse_hosts(row.hosts);
    if (!hosts)
        return hosts.error();
    return map_job(request, make_nodes(*hosts, topology(row.topology)));
}

constexpr std::string_view kJobId = "gantry-offline@0";

// The README's normalisation, applied to both sides; gantry's job id counts
// as a job id too.
std::string normalise(const std::string& text) {
    std::istringstream in(text);
    std::string out;
    const std::regex job_id(R"((prterun-\S+|gantry-offline)@\d+)");
    const std::regex slots(R"(Total slots allocated \d+)");
    for (std::string line; std::getline(in, line);) {
        if (line.find("compiled against libxml") != std::string::npos)
            continue;
        if (line.rfind("Warning: This map has been generated", 0) == 0)
            break;
        line = std::regex_replace(line, job_id, "prterun-JOBID@N");
        line = std::regex_replace(line, slots, "Total slots allocated N");
        line.erase(line.find_last_not_of(" \t\r") + 1);
        out += line + "\n";
    }
    while (out.size() >= 2 && out.ends_with("\n\n"))
        out.pop_back();
    return out;
}

std::string per_node_counts(const JobMap& map) {
    std::map<std::uint32_t, unsigned> counts;
    for (const Task& task : map.tasks)
        ++counts[task.node];
    std::string out;
    for (const auto& [node, count] : counts)
        out += (out.empty() ? "" : ",") + map.nodes[node].name + "=" + std::to_string(count);
    return out;
}

struct Tally {
    std::map<std::string, std::pair<int, int>> by_group;  // group: passed, total
    void add(const std::string& group, bool pass) {
        auto& [passed, total] = by_group[group];
        passed += pass;
        ++total;
    }
    std::string str() const {
        std::string out;
        for (const auto& [group, counts] : by_group)
            out += "  " + group + ": " + std::to_string(counts.first) + "/" +
                   std::to_string(counts.second) + " pass\n";
        return out;
    }
};

TEST(PrrteOffline, GoldenMapsMatchExactly) {
    GANTRY_REQUIRE_VECTORS();
    const auto dir = *test::vectors_dir() / "prrte-offline";
    Tally tally;
    int rows = 0;
    for (const Row& row : read_cases()) {
        if (row.golden == "-")
            continue;
        ++rows;
        const auto map = run(row);
        std::string got = map ? display_map(*map, {std::string(kJobId), true}) : map.error().str();
        const std::string expected = test::read_file(dir / row.golden);
        const bool pass = map && normalise(got) == expected;
        tally.add(row.group, pass);
        EXPECT_TRUE(pass) << row.id << "\n--- expected\n"
                          << expected << "--- got\n"
                          << normalise(got);
    }
    EXPECT_EQ(rows, 95);
    std::printf("PRRTE offline goldens:\n%s", tally.str().c_str());
}

TEST(PrrteOffline, ErrorRowsAreRefusedWithTheQuotedText) {
    GANTRY_REQUIRE_VECTORS();
    Tally tally;
    int rows = 0;
    const std::regex expect(R"re(error: no JOB MAP; output contains "(.*)")re");
    for (const Row& row : read_cases()) {
        std::smatch m;
        if (!std::regex_match(row.expect, m, expect))
            continue;
        ++rows;
        const auto map = run(row);
        const bool pass = !map && map.error().str().find(m[1].str()) != std::string::npos &&
                          map.error().str().find('\n') == std::string::npos;
        tally.add(row.group, pass);
        EXPECT_TRUE(pass) << row.id << ": expected an error containing \"" << m[1] << "\", got "
                          << (map ? "a map" : map.error().str());
    }
    EXPECT_EQ(rows, 954);
    std::printf("PRRTE offline error rows:\n%s", tally.str().c_str());
}

TEST(PrrteOffline, CountRowsGiveExactTasksPerNode) {
    GANTRY_REQUIRE_VECTORS();
    Tally tally;
    int rows = 0;
    for (const Row& row : read_cases()) {
        if (row.counts == "-")
            continue;
        ++rows;
        const auto map = run(row);
        const std::string got = map ? per_node_counts(*map) : map.error().str();
        tally.add(row.group, got == row.counts);
        EXPECT_EQ(got, row.counts) << row.id;
    }
    EXPECT_EQ(rows, 76);
    std::printf("PRRTE offline count rows:\n%s", tally.str().c_str());
}

// The suite's full matrix (its exhaustive mode: layouts even, uneven and
// single, -n 7 and 12): every combination the two matrix rules do not refuse
// must map, and satisfy the invariants of SPEC.rst that the suite checks.
struct MatrixCase {
    std::string map, rank, bind;
};

const std::vector<std::string> kMatrixMaps = {"slot",    "node",    "package", "numa",    "l3cache",
                                              "l2cache", "l1cache", "core",    "hwthread"};
const std::vector<std::string> kMatrixRanks = {"slot", "node", "fill", "span"};
const std::vector<std::string> kMatrixBinds = {"none",    "hwthread", "core", "l1cache",
                                               "l2cache", "l3cache",  "numa", "package"};

int ladder(const std::string& level) {  // finest first
    const std::vector<std::string> order = {"hwthread", "core", "l1cache", "l2cache",
                                            "l3cache",  "numa", "package"};
    return static_cast<int>(std::find(order.begin(), order.end(), level) - order.begin());
}

std::optional<std::string> matrix_error(const MatrixCase& c) {
    const bool node_level = c.map == "slot" || c.map == "node";
    if (node_level && (c.rank == "fill" || c.rank == "span"))
        return "must-map-by-obj";
    if (!node_level && c.bind != "none" && ladder(c.bind) > ladder(c.map))
        return "lies above the mapping object";
    return std::nullopt;
}

ObjectType object_type(const std::string& level) {
    for (const ObjectType type : kAllObjectTypes)
        if (to_string(type) == level)
            return type;
    throw std::runtime_error("no level " + level);
}

// Checks one successful single-app map; returns what is wrong, or "".
std::string matrix_violation(const MatrixCase& c, const JobMap& map, unsigned n) {
    if (map.tasks.size() != n)
        return "placed " + std::to_string(map.tasks.size());
    std::vector<unsigned> counts(map.nodes.size());
    for (std::size_t r = 0; r < map.tasks.size(); ++r) {
        if (map.tasks[r].rank != r)
            return "rank order";
        ++counts[map.tasks[r].node];
    }
    const unsigned nnodes = static_cast<unsigned>(map.nodes.size());
    if (c.map == "node") {
        for (unsigned i = 0; i < nnodes; ++i)
            if (counts[i] > map.nodes[i].slots)
                return "node over slots";
    } else if (n <= map.total_slots()) {
        unsigned left = n;
        for (unsigned i = 0; i < nnodes; ++i) {
            const unsigned fill = std::min(left, map.nodes[i].slots);
            if (counts[i] != fill)
                return "not a block fill";
            left -= fill;
        }
    }
    // Listing order: node by node, ranks ascending within a node.
    std::vector<std::uint32_t> listing;
    for (unsigned i = 0; i < nnodes; ++i)
        for (const Task& t : map.tasks)
            if (t.node == i)
                listing.push_back(t.rank);
    if (c.rank == "slot" && !std::is_sorted(listing.begin(), listing.end()))
        return "slot ranks out of listing order";
    if (c.rank == "node") {
        std::vector<unsigned> handed(nnodes);
        unsigned node = 0;
        for (const Task& t : map.tasks) {
            while (handed[node] == counts[node])
                node = (node + 1) % nnodes;
            if (t.node != node)
                return "node ranks not round robin";
            ++handed[node];
            node = (node + 1) % nnodes;
        }
    }
    for (const Task& t : map.tasks) {
        if (c.bind == "none") {
            if (!t.cpus.empty())
                return "bound under --bind-to none";
            continue;
        }
        const Topology& topo = map.nodes[t.node].topology;
        const auto objects = topo.objects(object_type(c.bind));
        if (std::none_of(objects.begin(), objects.end(),
                         [&](const TopoObject& o) { return o.pus == t.cpus; }))
            return "rank " + std::to_string(t.rank) + " bound to " + t.cpus.str() +
                   ", not one whole " + c.bind;
    }
    return "";
}

TEST(PrrteOffline, FullMatrixMapsOrRefusesByTheTwoRules) {
    GANTRY_REQUIRE_VECTORS();
    const std::pair<const char*, const char*> kLayouts[] = {
        {"even", "node0:8,node1:8,node2:8"}, {"uneven", "node0:8,node1:4"}, {"single", "node0:8"}};
    int maps = 0;
    int refusals = 0;
    for (const char* file :
         {"test-topo.xml", "test-topo2.xml", "turin-4gpu.xml", "turin-4gpu-nvml.xml"}) {
        for (const auto& [layout, hosts] : kLayouts) {
            for (const unsigned n : {7u, 12u}) {
                for (const auto& m : kMatrixMaps)
                    for (const auto& r : kMatrixRanks)
                        for (const auto& b : kMatrixBinds) {
                            const MatrixCase c{m, r, b};
                            Row row{"-",
                                    file,
                                    hosts,
                                    "--map-by " + m + " --rank-by " + r + " --bind-to " + b,
                                    "-n " + std::to_string(n),
                                    "map",
                                    "matrix",
                                    "matrix",
                                    "-"};
                            const auto map = run(row);
                            const std::string what = std::string(file) + " " + layout + " n" +
                                                     std::to_string(n) + " " + m + "/" + r + "/" +
                                                     b;
                            auto error = matrix_error(c);
                            // -n 12 on node0:8 does not fit, whatever the policy.
                            if (!error && n > 8 && std::string_view(layout) == "single")
                                error = "not enough slots available";
                            if (error) {
                                ++refusals;
                                EXPECT_TRUE(!map &&
                                            map.error().str().find(*error) != std::string::npos)
                                    << what;
                                continue;
                            }
                            ++maps;
                            if (!map) {
                                ADD_FAILURE() << what << ": " << map.error().str();
                                continue;
                            }
                            EXPECT_EQ(matrix_violation(c, *map, n), "") << what;
                        }
            }
        }
    }
    std::printf("PRRTE offline full matrix: %d maps checked, %d refusals\n", maps, refusals);
}

}  // namespace
}  // namespace gantry
