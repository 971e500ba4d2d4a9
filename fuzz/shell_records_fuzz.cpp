// Fuzzes the readers of the supervised shell's records and control
// messages. The first two bytes of the input (little-endian) choose where
// the rest is cut in two; the rest is given to a Reader and to a
// ControlReader in those two pieces, and a fence's bytes are read as puts.
// Checks that every record read re-encodes to exactly the bytes it
// consumed, that nothing is consumed without a record, that an error names
// the offset where reading stopped and stays, and that the cut changes
// nothing: the same records and the same error as the whole input given at
// once.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shell/records.h"

namespace {

using gantry::Error;
using gantry::shell::records::Control;
using gantry::shell::records::ControlReader;
using gantry::shell::records::kMaxFence;
using gantry::shell::records::kMaxHeader;
using gantry::shell::records::kMaxLength;
using gantry::shell::records::Reader;
using gantry::shell::records::Record;

void require(bool condition) {
    if (!condition)
        std::abort();
}

bool carries_bytes(const Record& record) {
    return record.kind == Record::Kind::kStdout || record.kind == Record::Kind::kStderr ||
           record.kind == Record::Kind::kMessage || record.kind == Record::Kind::kFence ||
           record.kind == Record::Kind::kModex || record.kind == Record::Kind::kModexRequest;
}

// A fence's bytes either parse into puts that encode to bytes which parse
// to the same puts, or give one line of error.
void check_fence(const std::string& bytes) {
    const auto puts = gantry::shell::records::parse_key_values(bytes);
    if (!puts) {
        const std::string line = puts.error().str();
        require(line.starts_with("records: fence line ") && line.find('\n') == std::string::npos);
        return;
    }
    const auto again =
        gantry::shell::records::parse_key_values(gantry::shell::records::encode_key_values(*puts));
    require(again && *again == *puts);
}

void check_value(const Record& record) {
    require(record.bytes.size() <= kMaxLength);
    require(carries_bytes(record) || record.bytes.empty());
    require(record.wait_status >= 0);
    require(record.kind == Record::Kind::kExit || record.wait_status == 0);
    require(record.kind == Record::Kind::kModexRequest || record.node == 0);
    require(record.kind != Record::Kind::kModexRequest ||
            record.bytes.size() <= gantry::shell::records::kMaxKey);
    if (record.kind == Record::Kind::kFence)
        check_fence(record.bytes);
}

void check_value(const Control& control) {
    require(control.kind == Control::Kind::kSignal ? control.signal >= 1 && control.signal <= 64
                                                   : control.signal == 0);
    require(control.kind == Control::Kind::kFence || control.kind == Control::Kind::kModex ||
            control.kind == Control::Kind::kModexRequest || control.bytes.empty());
    require(control.kind != Control::Kind::kModexRequest ||
            control.bytes.size() <= gantry::shell::records::kMaxKey);
    require(control.kind == Control::Kind::kModexRequest || control.kind == Control::Kind::kModex ||
            control.kind == Control::Kind::kNoModex || control.rank == 0);
    if (control.kind == Control::Kind::kFence)
        check_fence(control.bytes);
}

// What a reader made of a stream.
template <class Value>
struct Outcome {
    std::vector<Value> values;
    std::optional<Error> error;
    std::size_t consumed = 0;

    bool operator==(const Outcome&) const = default;
};

// Takes every value `reader` has, checking each against `stream`.
template <class ReaderType, class Value>
void take(ReaderType& reader, std::string_view stream, Outcome<Value>& outcome) {
    while (!outcome.error) {
        const std::size_t before = reader.consumed();
        auto next = reader.next();
        if (!next) {
            outcome.error = next.error();
            require(reader.consumed() == before);
            const std::string line = next.error().str();
            require(line.starts_with("records: "));
            require(line.ends_with(" at byte " + std::to_string(before)));
            break;
        }
        if (!*next) {
            require(reader.consumed() == before);
            break;
        }
        const std::string encoded = gantry::shell::records::encode(**next);
        require(reader.consumed() - before == encoded.size());
        require(stream.substr(before, encoded.size()) == encoded);
        check_value(**next);
        outcome.values.push_back(std::move(**next));
    }
    outcome.consumed = reader.consumed();
}

template <class ReaderType, class Value>
Outcome<Value> read(std::string_view stream, std::size_t cut) {
    ReaderType reader;
    Outcome<Value> outcome;
    reader.append(stream.substr(0, cut));
    take(reader, stream, outcome);
    reader.append(stream.substr(cut));
    take(reader, stream, outcome);
    if (outcome.error) {
        // A failed reader stays failed, whatever comes after.
        reader.append("started\nterminate\n");
        auto again = reader.next();
        require(!again && again.error() == *outcome.error);
    } else {
        // What is left is the start of a record still on its way.
        require(stream.size() - outcome.consumed < kMaxHeader + kMaxFence);
    }
    return outcome;
}

template <class ReaderType, class Value>
void check(std::string_view stream, std::size_t cut) {
    require((read<ReaderType, Value>(stream, cut) == read<ReaderType, Value>(stream, 0)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 2)
        return 0;
    const std::size_t position = data[0] | static_cast<std::size_t>(data[1]) << 8;
    const std::string_view stream(reinterpret_cast<const char*>(data) + 2, size - 2);
    const std::size_t cut = position % (stream.size() + 1);
    check<Reader, Record>(stream, cut);
    check<ControlReader, Control>(stream, cut);
    return 0;
}
