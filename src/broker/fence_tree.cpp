#include "broker/fence_tree.h"

#include <set>
#include <utility>

#include "util/base64.h"

namespace gantry::broker {

namespace {

// Whether `rank` is `self` or below it: children have higher ranks than
// their parents, so the walk up stops at or above `self`.
bool below(const overlay::Tree& tree, overlay::Rank self, overlay::Rank rank) {
    while (rank > self) {
        const auto parent = tree.parent(rank);
        if (!parent)
            return false;
        rank = *parent;
    }
    return rank == self;
}

// The request's job, ranks and puts; an error answers it.
struct FenceParams {
    std::uint64_t job = 0;
    IdSet ranks;
    std::string puts;
};

Result<FenceParams> fence_params(const overlay::Message& request) {
    const auto job = request.params.find("job");
    if (job == request.params.end() || !job->is_number_unsigned())
        return Error(request.method, "\"job\" must be a job id");
    auto ranks = IdSet::parse(request.params.value("ranks", ""));
    if (!ranks || ranks->empty())
        return Error(request.method, "\"ranks\" must be the job's ranks (an idset)");
    auto puts = base64_decode(request.params.value("puts", ""));
    if (!puts)
        return Error(request.method, "\"puts\": " + puts.error().str());
    return FenceParams{job->get<std::uint64_t>(), std::move(*ranks), std::move(*puts)};
}

}  // namespace

std::uint32_t ranks_below(const overlay::Tree& tree, overlay::Rank self, const IdSet& ranks) {
    std::uint32_t count = 0;
    for (const IdSet::Id rank : ranks)
        if (rank < tree.size && below(tree, self, rank))
            ++count;
    return count;
}

std::vector<overlay::Rank> children_toward(const overlay::Tree& tree, overlay::Rank self,
                                           const IdSet& ranks) {
    std::set<overlay::Rank> children;
    for (const IdSet::Id rank : ranks)
        if (rank < tree.size)
            if (const auto child = tree.child_toward(self, rank))
                children.insert(*child);
    return {children.begin(), children.end()};
}

FenceTree::FenceTree(Broker& broker, Peers& peers, const overlay::Tree& tree, Deliver deliver,
                     Complete complete)
    : broker_(broker),
      peers_(peers),
      tree_(tree),
      deliver_(std::move(deliver)),
      complete_(std::move(complete)) {
    broker_.register_method(
        "exec.fence-in",
        [this](const overlay::Message& request, Responder responder) {
            auto params = fence_params(request);
            if (!params) {
                responder.error(params.error());
                return;
            }
            const auto count = request.params.value("count", 0u);
            responder.result(Json::object());
            gathered(params->job, params->ranks, count, std::move(params->puts));
        },
        ServedOn::kEveryRank);
    broker_.register_method(
        "exec.fence-out",
        [this](const overlay::Message& request, Responder responder) {
            auto params = fence_params(request);
            if (!params) {
                responder.error(params.error());
                return;
            }
            responder.result(Json::object());
            broadcast(params->job, params->ranks, params->puts);
            if (params->ranks.contains(broker_.rank()))
                deliver_(params->job, params->puts);
        },
        ServedOn::kEveryRank);
}

void FenceTree::contribute(std::uint64_t job, const IdSet& ranks, const std::string& puts) {
    gathered(job, ranks, 1, puts);
}

void FenceTree::gathered(std::uint64_t job, const IdSet& ranks, std::uint32_t count,
                         std::string puts) {
    Gathering& gathering = gathering_[job];
    if (gathering.expected == 0)
        gathering.expected = ranks_below(tree_, broker_.rank(), ranks);
    gathering.count += count;
    // Each node's puts are whole KEY=VALUE lines: appended, they are still
    // lines, and rank 0 reads them all once.
    gathering.puts += puts;
    if (gathering.count < gathering.expected)
        return;
    std::string all = std::move(gathering.puts);
    const std::uint32_t total = gathering.count;
    gathering_.erase(job);
    const auto parent = tree_.parent(broker_.rank());
    if (!parent) {
        if (complete_)
            complete_(job, std::move(all));
        return;
    }
    peers_.call(
        *parent, "exec.fence-in",
        {{"job", job}, {"ranks", ranks.encode()}, {"count", total}, {"puts", base64_encode(all)}},
        [](const overlay::Reply&) {});
}

void FenceTree::broadcast(std::uint64_t job, const IdSet& ranks, const std::string& merged) {
    const std::string encoded = base64_encode(merged);
    for (const overlay::Rank child : children_toward(tree_, broker_.rank(), ranks))
        peers_.call(child, "exec.fence-out",
                    {{"job", job}, {"ranks", ranks.encode()}, {"puts", encoded}},
                    [](const overlay::Reply&) {});
}

}  // namespace gantry::broker
