// The records of a supervised shell: exact bytes of every record and
// control message, streams read back however they are cut, and every way a
// header can be wrong, with its message.
#include "shell/records.h"

#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "support/shell_jobs.h"

namespace gantry::shell::records {
namespace {

using test::exit_of;
using test::message;
using test::output;
using test::started;

using Kind = Record::Kind;

Control signal_of(int signal) {
    return Control{.kind = Control::Kind::kSignal, .signal = signal};
}

Control terminate() {
    return Control{.kind = Control::Kind::kTerminate, .signal = 0};
}

// Every record (or control) `reader` gives until it needs more bytes;
// fails the test on an error.
template <class AnyReader>
auto drain(AnyReader& reader) {
    std::vector<std::decay_t<decltype(**reader.next())>> items;
    while (true) {
        auto next = reader.next();
        if (!next) {
            ADD_FAILURE() << next.error().str();
            return items;
        }
        if (!*next)
            return items;
        items.push_back(std::move(**next));
    }
}

// The error a reader of records (or of controls) gives for `bytes`, all
// given at once.
template <class AnyReader = Reader>
std::string error_of(std::string_view bytes) {
    AnyReader reader;
    reader.append(bytes);
    while (true) {
        auto next = reader.next();
        if (!next)
            return next.error().str();
        if (!*next)
            return "(no error: waits for more bytes)";
    }
}

// One record of each kind, with bytes that look like headers and with no
// newline at all.
std::vector<Record> one_of_each() {
    return {
        started(),
        output(Kind::kStdout, 0, "hello\n"),
        output(Kind::kStderr, 1, "out 1 3\nabc"),
        output(Kind::kStdout, 4294967295U, ""),
        message("gantry: task 0 (node0) exited with exit code 3\n"),
        exit_of(0, 768),
        exit_of(1, INT_MAX),
        output(Kind::kStderr, 7, std::string("\0\n\r\xff", 4)),
        Record{.kind = Kind::kFence, .bytes = "a=1\nexit 0 0\n"},
        Record{.kind = Kind::kModexRequest,
               .rank = 4294967295U,
               .bytes = std::string(kMaxKey, 'k'),
               .node = 4294967295U},
        Record{.kind = Kind::kModexRequest, .rank = 1, .node = 0},
        Record{.kind = Kind::kModex, .rank = 3, .bytes = std::string("\0modex 1 0\n", 11)},
        Record{.kind = Kind::kNoModex, .rank = 0},
    };
}

std::string encode_all(const std::vector<Record>& records) {
    std::string stream;
    for (const Record& record : records)
        append(stream, record);
    return stream;
}

// ---- encoding ----

TEST(RecordsEncode, EachKind) {
    EXPECT_EQ(encode(output(Kind::kStdout, 3, "hi\n")), "out 3 3\nhi\n");
    EXPECT_EQ(encode(output(Kind::kStderr, 0, "")), "err 0 0\n");
    EXPECT_EQ(encode(output(Kind::kStdout, 4294967295U, "x")), "out 4294967295 1\nx");
    EXPECT_EQ(encode(message("gantry: x\n")), "msg 10\ngantry: x\n");
    EXPECT_EQ(encode(started()), "started\n");
    EXPECT_EQ(encode(exit_of(2, 768)), "exit 2 768\n");
    EXPECT_EQ(encode(exit_of(0, 0)), "exit 0 0\n");
    EXPECT_EQ(encode(exit_of(4294967295U, INT_MAX)), "exit 4294967295 2147483647\n");
}

TEST(RecordsEncode, Fences) {
    const KeyValues puts = {{"P0-businesscard", "description#vm$port#40$ifname#10.0.0.1$"},
                            {"k", "a=b"}};
    const std::string bytes = encode_key_values(puts);
    EXPECT_EQ(bytes, "P0-businesscard=description#vm$port#40$ifname#10.0.0.1$\nk=a=b\n");
    EXPECT_EQ(encode(Record{.kind = Kind::kFence, .bytes = bytes}), "fence 62\n" + bytes);
    EXPECT_EQ(encode(Control{Control::Kind::kFence, 0, bytes}), "fence 62\n" + bytes);
    EXPECT_EQ(parse_key_values(bytes).value(), puts);
    EXPECT_EQ(parse_key_values("").value(), KeyValues{});
}

// PMIx direct modex: a shell's get of another node's task's data, and the
// answers, both ways.
TEST(RecordsEncode, DirectModex) {
    EXPECT_EQ(encode(Record{.kind = Kind::kModexRequest, .rank = 5, .bytes = "btl.tcp", .node = 2}),
              "dmodex 5 2 7\nbtl.tcp");
    EXPECT_EQ(encode(Record{.kind = Kind::kModexRequest, .rank = 5, .node = 2}), "dmodex 5 2 0\n");
    EXPECT_EQ(encode(Record{.kind = Kind::kModex, .rank = 5, .bytes = "blob"}), "modex 5 4\nblob");
    EXPECT_EQ(encode(Record{.kind = Kind::kNoModex, .rank = 5}), "nomodex 5\n");
    EXPECT_EQ(encode(Control{.kind = Control::Kind::kModexRequest, .bytes = "k", .rank = 7}),
              "dmodex 7 1\nk");
    EXPECT_EQ(encode(Control{.kind = Control::Kind::kModex, .bytes = "xy", .rank = 7}),
              "modex 7 2\nxy");
    EXPECT_EQ(encode(Control{.kind = Control::Kind::kNoModex, .rank = 0}), "nomodex 0\n");
}

TEST(RecordsEncode, BadFenceBytes) {
    EXPECT_EQ(parse_key_values("a=1\nb").error().str(), "records: fence line 2 has no newline");
    EXPECT_EQ(parse_key_values("a=1\nnoequals\n").error().str(),
              "records: fence line 2 is not KEY=VALUE: \"noequals\"");
    EXPECT_EQ(parse_key_values("=v\n").error().str(),
              "records: fence line 1 is not KEY=VALUE: \"=v\"");
}

TEST(RecordsEncode, AppendAddsToWhatIsThere) {
    std::string out = "before|";
    append(out, exit_of(1, 9));
    EXPECT_EQ(out, "before|exit 1 9\n");
}

TEST(RecordsEncode, HeaderAlone) {
    std::string out;
    append_header(out, Kind::kStdout, 12, 1048576);
    append_header(out, Kind::kStderr, 0, 0);
    append_header(out, Kind::kMessage, 99, 5);  // a message has no rank
    EXPECT_EQ(out, "out 12 1048576\nerr 0 0\nmsg 5\n");
}

TEST(RecordsEncode, LongestHeaderFitsTheReadersWindow) {
    EXPECT_LE(encode(exit_of(4294967295U, INT_MAX)).size(), kMaxHeader);
    const std::string key(kMaxKey, 'k');
    EXPECT_EQ(
        encode(Record{
            .kind = Kind::kModexRequest, .rank = 4294967295U, .bytes = key, .node = 4294967295U}),
        "dmodex 4294967295 4294967295 511\n" + key);
    EXPECT_LE(std::string("dmodex 4294967295 4294967295 511\n").size(), kMaxHeader);
    std::string header;
    append_header(header, Kind::kStdout, 4294967295U, kMaxLength);
    EXPECT_LE(header.size(), kMaxHeader);
}

TEST(RecordsEncode, Controls) {
    EXPECT_EQ(encode(signal_of(15)), "signal 15\n");
    EXPECT_EQ(encode(signal_of(1)), "signal 1\n");
    EXPECT_EQ(encode(signal_of(64)), "signal 64\n");
    EXPECT_EQ(encode(terminate()), "terminate\n");
}

// ---- reading ----

TEST(RecordsReader, ReadsWhatWasEncoded) {
    const std::vector<Record> records = one_of_each();
    const std::string stream = encode_all(records);
    Reader reader;
    reader.append(stream);
    EXPECT_EQ(drain(reader), records);
    EXPECT_EQ(reader.consumed(), stream.size());
}

TEST(RecordsReader, SplitAtEveryByte) {
    const std::vector<Record> records = one_of_each();
    const std::string stream = encode_all(records);
    for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
        Reader reader;
        reader.append(std::string_view(stream).substr(0, cut));
        std::vector<Record> read = drain(reader);
        reader.append(std::string_view(stream).substr(cut));
        for (Record& record : drain(reader))
            read.push_back(std::move(record));
        EXPECT_EQ(read, records) << "cut at byte " << cut;
        EXPECT_EQ(reader.consumed(), stream.size()) << "cut at byte " << cut;
    }
}

TEST(RecordsReader, ByteByByte) {
    const std::vector<Record> records = one_of_each();
    const std::string stream = encode_all(records);
    Reader reader;
    std::vector<Record> read;
    std::vector<std::size_t> ends;  // consumed() after each record
    for (const char c : stream) {
        reader.append(std::string_view(&c, 1));
        for (Record& record : drain(reader)) {
            read.push_back(std::move(record));
            ends.push_back(reader.consumed());
        }
    }
    EXPECT_EQ(read, records);
    std::vector<std::size_t> expected;
    std::size_t end = 0;
    for (const Record& record : records)
        expected.push_back(end += encode(record).size());
    EXPECT_EQ(ends, expected);
}

TEST(RecordsReader, NothingUntilTheBytesHaveAllArrived) {
    Reader reader;
    reader.append("out 0 5\nabcd");
    EXPECT_EQ(drain(reader), std::vector<Record>());
    EXPECT_EQ(reader.consumed(), 0u);
    reader.append("e");
    EXPECT_EQ(drain(reader), std::vector<Record>{output(Kind::kStdout, 0, "abcde")});
}

TEST(RecordsReader, LengthAtTheLimit) {
    const std::string bytes(kMaxLength, 'x');
    const std::string stream = encode(output(Kind::kStdout, 0, bytes)) + encode(message(bytes));
    EXPECT_TRUE(stream.starts_with("out 0 1048576\n"));
    Reader reader;
    reader.append(stream);
    EXPECT_EQ(drain(reader),
              (std::vector<Record>{output(Kind::kStdout, 0, bytes), message(bytes)}));
}

TEST(RecordsReader, LengthOverTheLimitFailsBeforeTheBytesCome) {
    EXPECT_EQ(error_of("out 0 1048577\n"),
              "records: length 1048577 over the 1048576-byte limit at byte 0");
    EXPECT_EQ(error_of("msg 2000000\n"),
              "records: length 2000000 over the 1048576-byte limit at byte 0");
    EXPECT_EQ(error_of("started\nerr 3 18446744073709551615\n"),
              "records: length 18446744073709551615 over the 1048576-byte limit at byte 8");
}

TEST(RecordsReader, EveryBadHeaderWithItsMessage) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"out x 3\n", R"(records: bad header "out x 3" at byte 0)"},
        {"\n", R"(records: bad header "" at byte 0)"},
        {"out 1\n", R"(records: bad header "out 1" at byte 0)"},
        {"out 1 2 3\n", R"(records: bad header "out 1 2 3" at byte 0)"},
        {"out -1 2\n", R"(records: bad header "out -1 2" at byte 0)"},
        {"out +1 2\n", R"(records: bad header "out +1 2" at byte 0)"},
        {"out 01 2\n", R"(records: bad header "out 01 2" at byte 0)"},
        {"out 1 02\n", R"(records: bad header "out 1 02" at byte 0)"},
        {"out 1 0x2\n", R"(records: bad header "out 1 0x2" at byte 0)"},
        {"out 4294967296 0\n", R"(records: bad header "out 4294967296 0" at byte 0)"},
        {"out 1 18446744073709551616\n",
         R"(records: bad header "out 1 18446744073709551616" at byte 0)"},
        {"out  1 2\n", R"(records: bad header "out  1 2" at byte 0)"},
        {"out 1 2 \n", R"(records: bad header "out 1 2 " at byte 0)"},
        {"out\t1 2\n", R"(records: bad header "out\t1 2" at byte 0)"},
        {"OUT 1 2\n", R"(records: bad header "OUT 1 2" at byte 0)"},
        {"err 1\n", R"(records: bad header "err 1" at byte 0)"},
        {"msg\n", R"(records: bad header "msg" at byte 0)"},
        {"msg 1 2\n", R"(records: bad header "msg 1 2" at byte 0)"},
        {"msg 00\n", R"(records: bad header "msg 00" at byte 0)"},
        {"started 1\n", R"(records: bad header "started 1" at byte 0)"},
        {" started\n", R"(records: bad header " started" at byte 0)"},
        {"started\r\n", R"(records: bad header "started\x0d" at byte 0)"},
        {"exit 1\n", R"(records: bad header "exit 1" at byte 0)"},
        {"exit 1 -1\n", R"(records: bad header "exit 1 -1" at byte 0)"},
        {"exit 1 2147483648\n", R"(records: bad header "exit 1 2147483648" at byte 0)"},
        {"exit 4294967296 0\n", R"(records: bad header "exit 4294967296 0" at byte 0)"},
        {"exit 1 1 1\n", R"(records: bad header "exit 1 1 1" at byte 0)"},
        {"signal 15\n", R"(records: bad header "signal 15" at byte 0)"},
        {"dmodex 1 2\n", R"(records: bad header "dmodex 1 2" at byte 0)"},
        {"dmodex 1 x 0\n", R"(records: bad header "dmodex 1 x 0" at byte 0)"},
        {"dmodex 1 4294967296 0\n", R"(records: bad header "dmodex 1 4294967296 0" at byte 0)"},
        {"dmodex 1 2 512\n", R"(records: bad header "dmodex 1 2 512" at byte 0)"},
        {"modex 1\n", R"(records: bad header "modex 1" at byte 0)"},
        {"modex 01 2\n", R"(records: bad header "modex 01 2" at byte 0)"},
        {"modex 1 2000000\n", R"(records: length 2000000 over the 1048576-byte limit at byte 0)"},
        {"nomodex\n", R"(records: bad header "nomodex" at byte 0)"},
        {"nomodex 1 2\n", R"(records: bad header "nomodex 1 2" at byte 0)"},
        {"out 1 2\nabout x 3\n", R"(records: bad header "out x 3" at byte 10)"},
        {std::string("exit 0 0\0\n", 10), R"(records: bad header "exit 0 0\x00" at byte 0)"},
    };
    for (const auto& [bytes, error] : cases)
        EXPECT_EQ(error_of(bytes), error) << "for " << quote(bytes);
}

TEST(RecordsReader, ErrorNamesTheStreamOffsetAfterManyRecords) {
    std::string stream;
    while (stream.size() < 120)
        append(stream, exit_of(0, 0));  // 9 bytes each
    stream.resize(117);
    stream += "out x 3\n";
    EXPECT_EQ(error_of(stream), R"(records: bad header "out x 3" at byte 117)");
}

TEST(RecordsReader, HeaderWithoutNewlineWithinTheWindow) {
    // 39 bytes may still become a header; 40 cannot.
    EXPECT_EQ(error_of(std::string(39, '1')), "(no error: waits for more bytes)");
    EXPECT_EQ(error_of(std::string(40, '1')),
              R"(records: header "1111111111111111"... longer than 40 bytes at byte 0)");
    EXPECT_EQ(error_of("started\nout 1 " + std::string(40, '0')),
              R"(records: header "out 1 0000000000"... longer than 40 bytes at byte 8)");
    // A header line of exactly 40 bytes with its newline is read.
    const std::string longest = "out 4294967295 000000000000000000000001\n";
    ASSERT_EQ(longest.size(), kMaxHeader);
    EXPECT_EQ(error_of(longest),
              R"(records: bad header "out 4294967295 000000000000000000000001" at byte 0)");
}

TEST(RecordsReader, StaysFailed) {
    Reader reader;
    reader.append("started\nbad\n");
    auto first = reader.next();
    ASSERT_TRUE(first && *first);
    EXPECT_EQ(**first, started());
    auto error = reader.next();
    ASSERT_FALSE(error);
    reader.append("started\n");
    auto again = reader.next();
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error(), error.error());
    EXPECT_EQ(again.error().str(), R"(records: bad header "bad" at byte 8)");
    EXPECT_EQ(reader.consumed(), 8u);
}

TEST(RecordsReader, LongStreamInSmallPieces) {
    // The reader's buffer drops what it has consumed: many records through
    // one reader come out intact.
    std::vector<Record> records;
    for (std::uint32_t i = 0; i < 2000; ++i)
        records.push_back(output(i % 2 ? Kind::kStderr : Kind::kStdout, i,
                                 std::string(i % 97, static_cast<char>('a' + i % 26)) + "\n"));
    const std::string stream = encode_all(records);
    Reader reader;
    std::vector<Record> read;
    for (std::size_t at = 0; at < stream.size(); at += 1000) {
        reader.append(std::string_view(stream).substr(at, 1000));
        for (Record& record : drain(reader))
            read.push_back(std::move(record));
    }
    EXPECT_EQ(read, records);
}

// ---- control messages ----

TEST(RecordsControl, SplitAtEveryByte) {
    const std::vector<Control> controls = {
        signal_of(15),
        terminate(),
        Control{Control::Kind::kFence, 0, "a=1\nb=2\n"},
        signal_of(1),
        Control{Control::Kind::kFence, 0, ""},
        signal_of(64),
        Control{.kind = Control::Kind::kModexRequest, .bytes = "pmix.key", .rank = 3},
        Control{.kind = Control::Kind::kModex,
                .bytes = std::string("\0dmodex 1\n", 10),
                .rank = 4294967295U},
        Control{.kind = Control::Kind::kNoModex, .rank = 0},
        signal_of(9)};
    std::string stream;
    for (const Control& control : controls)
        stream += encode(control);
    for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
        ControlReader reader;
        reader.append(std::string_view(stream).substr(0, cut));
        std::vector<Control> read = drain(reader);
        reader.append(std::string_view(stream).substr(cut));
        for (const Control& control : drain(reader))
            read.push_back(control);
        EXPECT_EQ(read, controls) << "cut at byte " << cut;
        EXPECT_EQ(reader.consumed(), stream.size());
    }
}

TEST(RecordsControl, EveryBadMessageWithItsMessage) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"signal 0\n", R"(records: bad control message "signal 0" at byte 0)"},
        {"signal 65\n", R"(records: bad control message "signal 65" at byte 0)"},
        {"signal 015\n", R"(records: bad control message "signal 015" at byte 0)"},
        {"signal -9\n", R"(records: bad control message "signal -9" at byte 0)"},
        {"signal +9\n", R"(records: bad control message "signal +9" at byte 0)"},
        {"signal\n", R"(records: bad control message "signal" at byte 0)"},
        {"signal 9 9\n", R"(records: bad control message "signal 9 9" at byte 0)"},
        {"signal TERM\n", R"(records: bad control message "signal TERM" at byte 0)"},
        {"signal 99999999999999999999999\n",
         R"(records: bad control message "signal 99999999999999999999999" at byte 0)"},
        {"terminate now\n", R"(records: bad control message "terminate now" at byte 0)"},
        {"terminate \n", R"(records: bad control message "terminate " at byte 0)"},
        {"kill\n", R"(records: bad control message "kill" at byte 0)"},
        {"\n", R"(records: bad control message "" at byte 0)"},
        {"started\n", R"(records: bad control message "started" at byte 0)"},
        {"terminate\nsignal 15\nhello\n", R"(records: bad control message "hello" at byte 20)"},
        {"fence\n", R"(records: bad control message "fence" at byte 0)"},
        {"fence 1 2\n", R"(records: bad control message "fence 1 2" at byte 0)"},
        {"dmodex\n", R"(records: bad control message "dmodex" at byte 0)"},
        {"dmodex 1\n", R"(records: bad control message "dmodex 1" at byte 0)"},
        {"dmodex 1 512\n", R"(records: bad control message "dmodex 1 512" at byte 0)"},
        {"dmodex 4294967296 0\n",
         R"(records: bad control message "dmodex 4294967296 0" at byte 0)"},
        {"modex 1\n", R"(records: bad control message "modex 1" at byte 0)"},
        {"modex x 1\n", R"(records: bad control message "modex x 1" at byte 0)"},
        {"modex 1 67108865\n",
         R"(records: length 67108865 over the 67108864-byte limit at byte 0)"},
        {"nomodex -1\n", R"(records: bad control message "nomodex -1" at byte 0)"},
        {"fence 67108865\n", R"(records: length 67108865 over the 67108864-byte limit at byte 0)"},
        {"terminate\n" + std::string(40, 'x'),
         R"(records: control message "xxxxxxxxxxxxxxxx"... longer than 40 bytes at byte 10)"},
    };
    for (const auto& [bytes, error] : cases)
        EXPECT_EQ(error_of<ControlReader>(bytes), error) << "for " << quote(bytes);
    EXPECT_EQ(error_of<ControlReader>("signal 1"), "(no error: waits for more bytes)");
}

TEST(RecordsControl, StaysFailed) {
    ControlReader reader;
    reader.append("nonsense\n");
    ASSERT_FALSE(reader.next());
    reader.append("terminate\n");
    auto again = reader.next();
    ASSERT_FALSE(again);
    EXPECT_EQ(again.error().str(), R"(records: bad control message "nonsense" at byte 0)");
}

}  // namespace
}  // namespace gantry::shell::records
