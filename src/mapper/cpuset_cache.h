// Internal to the mapper: what is derived from a task's cpuset (its OS
// indices, its text in a display) made once per distinct cpuset. A million
// tasks on nodes of one topology have a few hundred distinct cpusets, and
// tasks next to each other often share one.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>

#include "formats/idset.h"

namespace gantry {

template <class Value>
class CpusetCache {
public:
    // The value for `cpus`, made by `make()` the first time. `topology`: the
    // handle of the topology the value depends on (copies of a loaded
    // topology share one), or nullptr; `variant`: anything else it depends
    // on (the CPU unit). The reference stays valid as long as the cache.
    template <class Make>
    const Value& get(const void* topology, unsigned variant, const IdSet& cpus, Make&& make) {
        const View view{topology, variant, cpus.ranges()};
        // Neighbouring tasks: no hashing at all.
        if (last_ != nullptr && Equal{}(last_->first, view))
            return last_->second;
        auto found = values_.find(view);
        if (found == values_.end())
            found = values_.emplace(Key{topology, variant, cpus}, make()).first;
        // Nodes of an unordered_map stay put when it grows.
        last_ = &*found;
        return found->second;
    }

private:
    struct Key {
        const void* topology;
        unsigned variant;
        IdSet cpus;
    };
    // A key looked up without copying the task's cpuset.
    struct View {
        const void* topology;
        unsigned variant;
        std::span<const IdSet::Range> ranges;
    };
    static View view_of(const Key& key) { return {key.topology, key.variant, key.cpus.ranges()}; }
    static const View& view_of(const View& view) { return view; }

    struct Hash {
        using is_transparent = void;
        template <class K>
        std::size_t operator()(const K& k) const {
            const View& view = view_of(k);
            std::uint64_t h = reinterpret_cast<std::uintptr_t>(view.topology) ^ view.variant;
            for (const IdSet::Range& r : view.ranges)
                h = (h ^ (std::uint64_t{r.lo} << 32 | r.hi)) * 0x9e3779b97f4a7c15u;
            return static_cast<std::size_t>(h ^ (h >> 29));
        }
    };
    struct Equal {
        using is_transparent = void;
        template <class A, class B>
        bool operator()(const A& a, const B& b) const {
            const View& x = view_of(a);
            const View& y = view_of(b);
            return x.topology == y.topology && x.variant == y.variant &&
                   std::equal(x.ranges.begin(), x.ranges.end(), y.ranges.begin(), y.ranges.end());
        }
    };

    std::unordered_map<Key, Value, Hash, Equal> values_;
    const std::pair<const Key, Value>* last_ = nullptr;
};

}  // namespace gantry
