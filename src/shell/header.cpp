#include "shell/header.h"

#include <utility>

#include "shell/map_inputs.h"
#include "topo/rank_topologies.h"

namespace gantry::shell {

namespace {

constexpr std::string_view kDomain = "job-shell";

// The position of `rank` among R's ranks: its node in the map.
Result<std::size_t> node_of_rank(const Json& rank, const ResourceSet& R) {
    if (!rank.is_number_unsigned())
        return Error(std::string(kDomain), "the header has no \"rank\" (a broker rank)");
    const IdSet ranks = R.ranks();
    const auto value = rank.get<std::uint64_t>();
    const auto index = value <= IdSet::kMaxId
                           ? ranks.index_of(static_cast<ResourceSet::Rank>(value))
                           : std::nullopt;
    if (!index)
        return Error(std::string(kDomain),
                     "rank " + rank.dump() + " is not among R's ranks (" + ranks.encode() + ")");
    return static_cast<std::size_t>(*index);
}

}  // namespace

Json shell_header(const std::string& id, const Json& jobspec, const ResourceSet& R,
                  std::uint32_t rank, const Json& topologies, const Json& map_inputs) {
    return {{"id", id},     {"jobspec", jobspec},       {"R", R.to_json()},
            {"rank", rank}, {"topologies", topologies}, {"map_inputs", map_inputs}};
}

Result<ShellHeader> parse_shell_header(std::string_view text) {
    auto header = parse_json(kDomain, text);
    if (!header)
        return header.error();
    if (!header->is_object())
        return Error(std::string(kDomain), "the header is not an object");
    ShellHeader parsed;
    auto spec = Jobspec::from_json(header->value("jobspec", Json()));
    if (!spec)
        return spec.error();
    parsed.jobspec = std::move(*spec);
    auto R = ResourceSet::from_json(header->value("R", Json()));
    if (!R)
        return R.error();
    parsed.R = std::move(*R);
    const Json& rank = header->value("rank", Json());
    auto node = node_of_rank(rank, parsed.R);
    if (!node)
        return node.error();
    parsed.rank = rank.get<std::uint32_t>();
    parsed.node = *node;
    const Json& id = header->value("id", Json("0"));
    if (!id.is_string())
        return Error(std::string(kDomain), "the header's \"id\" is not a string");
    parsed.id = id.get<std::string>();
    // The broker's topologies of R's ranks: the nodes it mapped the job on.
    auto topologies = RankTopologies::from_json(header->value("topologies", Json()));
    if (!topologies)
        return topologies.error();
    // Not this host's: its names and files may not be those of the broker's
    // host, where the job was mapped.
    auto inputs = map_inputs_from_json(header->value("map_inputs", Json()));
    if (!inputs)
        return inputs.error();
    parsed.inputs = std::move(*inputs);
    parsed.inputs.ranks = std::move(*topologies);
    return parsed;
}

}  // namespace gantry::shell
