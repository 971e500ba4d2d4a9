// `gantry R`: encode, decode and combine RFC 20 resource sets, in the manner
// of `flux R`. Reference: docs/commands/R.md.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "formats/rset.h"
#include "topo/topology.h"
#include "util/text.h"

namespace gantry::cli {

namespace {

constexpr std::string_view kDomain = "R";

constexpr std::string_view kExamples = R"(Examples:
  $ gantry R encode --ranks 0-3 --cores 0-3 --gpus 0 --hosts foo[0-3] | gantry R decode --short
  rank[0-3]/core[0-3],gpu0
  $ (gantry R encode -r 0-1 -c 0-1; gantry R encode -r 2-3 -c 0-1 -g 0-1) | gantry R append | gantry R decode -s
  rank[0-1]/core[0-1] rank[2-3]/core[0-1],gpu[0-1]
  $ gantry R encode -r 5,99,1000 | gantry R remap | gantry R decode --ranks
  0-2
  $ gantry R encode -r 0-3 -H foo[0-3] | gantry R rerank 'foo[3,2,1,0]' | gantry R decode --nodelist
  foo[3,2,1,0]
  $ gantry R encode --local | gantry R decode --count core
  <cores>

R documents are read from stdin (one or more, concatenated) or from the files
given as arguments. Run `gantry R SUBCOMMAND --help` for each subcommand.

Exit status: 0 on success; 1 when `verify` finds resources missing; 2 on a bad
R document or bad options.)";

struct EncodeOptions {
    std::optional<std::string> ranks;
    std::optional<std::string> cores;
    std::optional<std::string> gpus;
    std::optional<std::string> hosts;
    std::vector<std::string> properties;
    bool local = false;
    std::optional<std::string> xml;
};

struct DecodeOptions {
    bool short_form = false;
    bool nodelist = false;
    bool ranks = false;
    std::optional<std::string> count;
    std::optional<std::string> include;
    std::optional<std::string> exclude;
    std::optional<std::string> properties;
};

struct Options {
    EncodeOptions encode;
    DecodeOptions decode;
    std::vector<std::string> files;
    std::string hostlist;                 // rerank
    std::vector<std::string> properties;  // set-property
    std::optional<std::string> verify_config;
};

Error error(std::string message) {
    return Error(std::string(kDomain), std::move(message));
}

// An error of another domain re-told under `R: <where>: `, input and offset kept.
Error retold(const std::string& where, const Error& inner) {
    std::string message = where + ": " + inner.message();
    if (inner.input() && inner.offset())
        return Error::at(std::string(kDomain), std::move(message), *inner.input(), *inner.offset());
    if (inner.input())
        return Error::in(std::string(kDomain), std::move(message), *inner.input());
    return error(std::move(message));
}

// --- Input ----------------------------------------------------------------

Result<std::string> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return error("cannot read " + path + ": " + std::strerror(errno));
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The R documents of the files, or of stdin when there are none.
Result<std::vector<ResourceSet>> read_sets(const std::vector<std::string>& files) {
    std::vector<ResourceSet> sets;
    if (files.empty()) {
        auto parsed = ResourceSet::parse_all(read_stdin());
        if (!parsed)
            return parsed.error();
        sets = std::move(*parsed);
    }
    for (const auto& file : files) {
        auto text = read_file(file);
        if (!text)
            return text.error();
        auto parsed = ResourceSet::parse_all(*text);
        if (!parsed)
            return retold(file, parsed.error());
        for (auto& set : *parsed)
            sets.push_back(std::move(set));
    }
    if (sets.empty())
        return error(files.empty() ? "no R document on stdin" : "no R document in the files given");
    return sets;
}

// The union of every document read; a single document passes unchanged.
Result<ResourceSet> read_union(const std::vector<std::string>& files) {
    auto sets = read_sets(files);
    if (!sets)
        return sets.error();
    ResourceSet result = std::move(sets->front());
    for (std::size_t i = 1; i < sets->size(); ++i) {
        auto merged = result.add((*sets)[i]);
        if (!merged)
            return merged.error();
        result = std::move(*merged);
    }
    return result;
}

int print(const ResourceSet& set) {
    std::cout << set.encode() << '\n';
    return kExitOk;
}

// --- encode -----------------------------------------------------------------

Result<IdSet> idset_option(const std::optional<std::string>& value, std::string_view name,
                           std::string_view fallback) {
    auto ids = IdSet::parse(value.value_or(std::string(fallback)));
    if (!ids)
        return retold("--" + std::string(name), ids.error());
    return ids;
}

// Children of every rank: from --cores/--gpus, or from hwloc with --local/--xml.
Result<Target> encode_children(const EncodeOptions& options) {
    if (options.local || options.xml) {
        if (options.cores || options.gpus)
            return error("encode: --cores and --gpus do not go with --local or --xml");
        auto topology = options.xml ? Topology::from_xml(*options.xml) : Topology::local();
        if (!topology)
            return topology.error();
        Target children;
        if (topology->ncores() > 0)
            children.cores = IdSet::range(0, topology->ncores() - 1);
        if (topology->ngpus() > 0)
            children.gpus = IdSet::range(0, topology->ngpus() - 1);
        return children;
    }
    // With neither --cores nor --gpus, each rank gets core 0.
    auto cores = idset_option(options.cores, "cores", options.gpus ? "" : "0");
    if (!cores)
        return cores.error();
    auto gpus = idset_option(options.gpus, "gpus", "");
    if (!gpus)
        return gpus.error();
    return Target{"", *cores, *gpus};
}

// Ranks from --ranks, else one per host of --hosts, else rank 0; hosts from
// --hosts, else this machine's name for every rank.
Result<std::pair<IdSet, std::vector<std::string>>> encode_targets(const EncodeOptions& options) {
    std::optional<Hostlist> hosts;
    if (options.hosts) {
        auto parsed = Hostlist::parse(*options.hosts);
        if (!parsed)
            return retold("--hosts", parsed.error());
        hosts = std::move(*parsed);
    }
    IdSet ranks;
    if (options.ranks) {
        auto parsed = idset_option(options.ranks, "ranks", "");
        if (!parsed)
            return parsed.error();
        ranks = std::move(*parsed);
    } else {
        const std::size_t count = hosts ? hosts->count() : 1;
        if (count > ResourceSet::kMaxRanks)
            return error("encode: more than " + std::to_string(ResourceSet::kMaxRanks) + " hosts");
        if (count > 0)
            ranks = IdSet::range(0, static_cast<IdSet::Id>(count - 1));
    }
    if (ranks.count() > ResourceSet::kMaxRanks)
        return error("encode: more than " + std::to_string(ResourceSet::kMaxRanks) + " ranks");
    if (hosts && hosts->count() != ranks.count())
        return error("encode: --hosts names " + counted(hosts->count(), "host") + " for " +
                     counted(ranks.count(), "rank"));
    std::vector<std::string> names =
        hosts ? hosts->expand() : std::vector<std::string>(ranks.count(), local_hostname());
    return std::pair{std::move(ranks), std::move(names)};
}

int run_encode(const EncodeOptions& options) {
    auto children = encode_children(options);
    if (!children)
        return fail(children.error());
    auto targets = encode_targets(options);
    if (!targets)
        return fail(targets.error());
    const auto& [ranks, hosts] = *targets;
    ResourceSet set;
    std::size_t i = 0;
    for (const auto rank : ranks) {
        Target target = *children;
        target.hostname = hosts[i++];
        if (auto status = set.insert(rank, target); !status)
            return fail(status.error());
    }
    for (const auto& spec : options.properties)
        if (auto status = set.set_property_spec(spec); !status)
            return fail(status.error());
    return print(set);
}

// --- decode -----------------------------------------------------------------

std::vector<std::string> split_commas(std::string_view text) {
    std::vector<std::string> words;
    std::size_t begin = 0;
    while (begin <= text.size()) {
        const auto comma = std::min(text.find(',', begin), text.size());
        if (comma > begin)
            words.emplace_back(text.substr(begin, comma - begin));
        begin = comma + 1;
    }
    return words;
}

// The decoded set after --properties, --include and --exclude.
Result<ResourceSet> decode_selection(ResourceSet set, const DecodeOptions& options) {
    if (options.properties) {
        auto copy = set.copy_properties(split_commas(*options.properties));
        if (!copy)
            return copy.error();
        set = std::move(*copy);
    }
    if (options.include) {
        auto ranks = idset_option(options.include, "include", "");
        if (!ranks)
            return ranks.error();
        set = set.copy_ranks(*ranks);
    }
    if (options.exclude) {
        auto ranks = idset_option(options.exclude, "exclude", "");
        if (!ranks)
            return ranks.error();
        set = set.remove_ranks(*ranks);
    }
    return set;
}

Result<std::string> count_of(const ResourceSet& set, const std::string& type) {
    if (type == "node")
        return std::to_string(set.nnodes());
    if (type == "core")
        return std::to_string(set.ncores());
    if (type == "gpu")
        return std::to_string(set.ngpus());
    return error("--count: unknown resource type " + quote(type) + " (expected node, core or gpu)");
}

int run_decode(const DecodeOptions& options, const std::vector<std::string>& files) {
    if (options.count && options.count != "node" && options.count != "core" &&
        options.count != "gpu")
        return fail(count_of({}, *options.count).error());
    auto merged = read_union(files);
    if (!merged)
        return fail(merged.error());
    auto set = decode_selection(std::move(*merged), options);
    if (!set)
        return fail(set.error());
    std::string out;
    if (options.short_form)
        out += set->short_form() + '\n';
    if (options.nodelist)
        out += set->nodelist().encode() + '\n';
    if (options.ranks)
        out += set->ranks().encode() + '\n';
    if (options.count)
        out += count_of(*set, *options.count).value() + '\n';
    if (out.empty())
        out = set->encode() + '\n';
    std::cout << out;
    return kExitOk;
}

// --- Combining ------------------------------------------------------------

int run_append(const std::vector<std::string>& files) {
    auto sets = read_sets(files);
    if (!sets)
        return fail(sets.error());
    ResourceSet result;
    for (const auto& set : *sets) {
        auto appended = result.append(set);
        if (!appended)
            return fail(appended.error());
        result = std::move(*appended);
    }
    return print(result);
}

// (R1 op R2) op R3 ...: diff and intersect need two sets or more.
int run_fold(std::string_view name, const std::vector<std::string>& files,
             ResourceSet (ResourceSet::*op)(const ResourceSet&) const) {
    auto sets = read_sets(files);
    if (!sets)
        return fail(sets.error());
    if (sets->size() < 2)
        return fail(error(std::string(name) + " needs at least 2 R documents, got 1"));
    ResourceSet result = (*sets)[0];
    for (std::size_t i = 1; i < sets->size(); ++i)
        result = (result.*op)((*sets)[i]);
    return print(result);
}

int run_remap(const std::vector<std::string>& files) {
    auto merged = read_union(files);
    if (!merged)
        return fail(merged.error());
    return print(merged->remap());
}

int run_rerank(const std::string& hostlist, const std::vector<std::string>& files) {
    auto merged = read_union(files);
    if (!merged)
        return fail(merged.error());
    auto reranked = merged->rerank(hostlist);
    if (!reranked)
        return fail(reranked.error());
    return print(*reranked);
}

int run_set_property(const std::vector<std::string>& specs) {
    auto merged = read_union({});
    if (!merged)
        return fail(merged.error());
    for (const auto& spec : specs)
        if (auto status = merged->set_property_spec(spec); !status)
            return fail(status.error());
    return print(*merged);
}

int run_verify(const std::optional<std::string>& config, const std::vector<std::string>& files) {
    VerifyPolicy policy;
    if (config) {
        auto json = parse_json("R: --config", *config);
        if (!json)
            return fail(json.error());
        auto parsed = VerifyPolicy::from_json(*json);
        if (!parsed)
            return fail(parsed.error());
        policy = *parsed;
    }
    auto sets = read_sets(files);
    if (!sets)
        return fail(sets.error());
    if (sets->size() != 2)
        return fail(error("verify needs exactly 2 R documents (expected, then actual), got " +
                          std::to_string(sets->size())));
    const Verification verdict = (*sets)[0].verify((*sets)[1], policy);
    if (verdict.outcome == Verification::Outcome::kMatch)
        return kExitOk;
    std::cerr << "gantry: R: verify: " << verdict.message << '\n';
    return verdict.outcome == Verification::Outcome::kMissing ? kExitRuntime : kExitOk;
}

// --- Options --------------------------------------------------------------

CLI::App* add_subcommand(CLI::App& app, const std::string& name, const std::string& summary,
                         std::string_view examples) {
    auto* sub = app.add_subcommand(name, summary);
    sub->formatter(app.get_formatter());
    sub->footer("Examples:" + std::string(examples));
    return sub;
}

void add_files(CLI::App* sub, Options& options) {
    sub->add_option("FILE", options.files, "Files of R documents; with none, stdin is read")
        ->type_name("FILE");
}

void define_encode(CLI::App& app, EncodeOptions& options) {
    auto* sub = add_subcommand(app, "encode", "Write an R document from options", R"(
  $ gantry R encode --ranks 0-1 --cores 0-3 --hosts node[0-1]
  {"version":1,"execution":{"R_lite":[{"rank":"0-1","children":{"core":"0-3"}}],"nodelist":["node[0-1]"],"starttime":0.0,"expiration":0.0}}
  $ gantry R encode -H foo[0-1] -g 0 -c 0-1 -p xx:0 -p all | gantry R decode -c node -p xx
  1
  $ gantry R encode --xml machine.xml --hosts foo | gantry R decode --short
  rank0/core[0-43]

Without --ranks, there is one rank per host of --hosts, or rank 0. Without
--hosts, every rank is this machine. Without --cores and --gpus, each rank has
core 0.)");
    sub->add_option("-r,--ranks", options.ranks, "Ranks of R (an idset)")->type_name("IDSET");
    sub->add_option("-c,--cores", options.cores, "Core ids of each rank (default 0)")
        ->type_name("IDS");
    sub->add_option("-g,--gpus", options.gpus, "GPU ids of each rank (default none)")
        ->type_name("IDS");
    sub->add_option("-H,--hosts", options.hosts, "Host names of the ranks, in rank order")
        ->type_name("HOSTLIST");
    sub->add_option("-p,--property", options.properties,
                    "Give property NAME to RANKS (default: all ranks); repeatable")
        ->type_name("NAME[:RANKS]");
    sub->add_flag("-l,--local", options.local, "Cores and GPUs of this machine, through hwloc");
    sub->add_option("-f,--xml", options.xml, "Cores and GPUs of an hwloc XML topology")
        ->type_name("FILE");
}

void define_decode(CLI::App& app, Options& options) {
    auto* sub =
        add_subcommand(app, "decode", "Print the union of R documents, or facts about it", R"(
  $ gantry R encode -r 0-3 -c 0-3 -g 0 | gantry R decode --short
  rank[0-3]/core[0-3],gpu0
  $ gantry R encode -r 0-1023 | gantry R decode --include 5-7 --short
  rank[5-7]/core0
  $ gantry R encode -r 1-10 | gantry R decode --exclude 5-7 --ranks
  1-4,8-10
  $ gantry R encode -c 0-1 -r 0-1 | gantry R decode --count core
  4
  $ gantry R encode -H foo[0-1] -p yy:1 | gantry R decode --nodelist --properties ^yy
  foo0

With no option the R document is printed. Each option prints one line, in
the order --short, --nodelist, --ranks, --count.)");
    auto& o = options.decode;
    sub->add_flag("-s,--short", o.short_form, "Print the short form: rank[0-3]/core[0-3],gpu0");
    sub->add_flag("-n,--nodelist", o.nodelist, "Print the host names as a hostlist");
    sub->add_flag("-r,--ranks", o.ranks, "Print the ranks as an idset");
    sub->add_option("-c,--count", o.count, "Print how many there are of TYPE: node, core or gpu")
        ->type_name("TYPE");
    sub->add_option("-i,--include", o.include, "Keep only these ranks")->type_name("RANKS");
    sub->add_option("-x,--exclude", o.exclude, "Drop these ranks")->type_name("RANKS");
    sub->add_option("-p,--properties", o.properties,
                    "Keep ranks with every property listed (^NAME: without it; a host name "
                    "counts as a property)")
        ->type_name("LIST");
    add_files(sub, options);
}

void define_combining(CLI::App& app, Options& options) {
    add_files(add_subcommand(app, "append", "Union of disjoint R documents", R"(
  $ (gantry R encode -r 0-1 -c 0-1; gantry R encode -r 1-2 -c 2-3) | gantry R append | gantry R decode -s
  rank0/core[0-1] rank1/core[0-3] rank2/core[2-3]

A core or GPU in two documents is an error.)"),
              options);
    add_files(add_subcommand(app, "diff", "R1 minus R2 minus R3 ...", R"(
  $ (gantry R encode -r 0-1 -c 0-1; gantry R encode -r 0-1 -c 0) | gantry R diff | gantry R decode -s
  rank[0-1]/core1)"),
              options);
    add_files(add_subcommand(app, "intersect", "Resources in every R document", R"(
  $ (gantry R encode -r 0-3 -c 0-1; gantry R encode -r 1-5 -c 0) | gantry R intersect | gantry R decode -s
  rank[1-3]/core0)"),
              options);
    add_files(add_subcommand(app, "remap",
                             "Union with ranks renumbered from 0 (and cores, for a child instance)",
                             R"(
  $ gantry R encode -r 5,99,1000 | gantry R remap | gantry R decode -s
  rank[0-2]/core0)"),
              options);
    auto* rerank = add_subcommand(app, "rerank", "Union with ranks in the order of HOSTLIST", R"(
  $ gantry R encode -r 0-3 -H foo[0-3] | gantry R rerank 'foo[3,2,1,0]' | gantry R decode --nodelist
  foo[3,2,1,0]

HOSTLIST must name each host of R once.)");
    rerank->add_option("HOSTLIST", options.hostlist, "The hosts of R in their new rank order")
        ->required();
    add_files(rerank, options);
    auto* verify = add_subcommand(
        app, "verify", "Check that the second R holds the resources the first expects per rank",
        R"(
  $ (gantry R encode -r 1 -c 0-3; gantry R encode -r 1 -c 0-2) | gantry R verify   # exit 1
  gantry: R: verify: rank 1 (<host>) missing resources: core3
  $ (gantry R encode -r 1 -c 0-3; gantry R encode -r 1 -c 0-3 -g 0) | gantry R verify --config '{"gpu":"allow-extra"}'

The first document is what is expected, the second what a rank found. Exit
status 1 when resources are missing; extra resources are reported and exit 0.
--config takes modes strict, allow-extra, allow-missing or ignore for keys
default, core, gpu and hostname.)");
    verify->add_option("--config", options.verify_config, "What to check, as JSON")
        ->type_name("JSON");
    add_files(verify, options);
    auto* set_property =
        add_subcommand(app, "set-property", "Give properties to ranks of R on stdin", R"(
  $ gantry R encode -r 0-3 | gantry R set-property gpu:0-1 login:0 | gantry R decode -p gpu -r
  0-1)");
    set_property
        ->add_option("NAME[:RANKS]", options.properties, "Property and its ranks (default all)")
        ->required();
}

}  // namespace

int rset_main(int argc, char** argv) {
    CLI::App app("Encode, decode and combine RFC 20 resource sets (R).", "R");
    app.footer(std::string(kExamples));
    app.require_subcommand(1);
    Options options;
    define_encode(app, options.encode);
    define_decode(app, options);
    define_combining(app, options);
    if (const auto code = parse_options(app, argc, argv))
        return *code;

    const std::string name = app.get_subcommands().front()->get_name();
    if (name == "encode")
        return run_encode(options.encode);
    if (name == "decode")
        return run_decode(options.decode, options.files);
    if (name == "append")
        return run_append(options.files);
    if (name == "diff")
        return run_fold(name, options.files, &ResourceSet::diff);
    if (name == "intersect")
        return run_fold(name, options.files, &ResourceSet::intersect);
    if (name == "remap")
        return run_remap(options.files);
    if (name == "rerank")
        return run_rerank(options.hostlist, options.files);
    if (name == "verify")
        return run_verify(options.verify_config, options.files);
    return run_set_property(options.properties);
}

}  // namespace gantry::cli
