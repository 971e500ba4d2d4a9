// Fuzzes the message envelope (src/overlay/message.h): the parsers of a
// client's request, of a broker's message and of a reply, and the line
// framing, with the bytes any client may write on the local socket; and the
// text of a broker's CURVE certificate (src/overlay/certificate.h), which
// every input is read as too.
// Invariants: a client's request parsed has the uid the receiving side
// gave and no route, whatever the line says; whatever parses, encoded
// again, parses back to the same message; an error names the id it carries
// only when it read one; and lines cut by LineBuffer, joined again with
// their '\n', give back the input. A certificate that parses has two keys,
// the public one its secret one's, and encoded again parses back to itself;
// an error about one is a single line that never shows a secret key. A
// bootstrap entry that parses encodes back to itself; the launch agent's
// words hold no blank.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "overlay/broker_address.h"
#include "overlay/certificate.h"
#include "overlay/config.h"
#include "overlay/launch_agent.h"
#include "overlay/message.h"

namespace {

using namespace gantry::overlay;

constexpr uid_t kSender = 1000;

void require(bool condition) {
    if (!condition)
        std::abort();
}

std::string_view without_newline(const std::string& line) {
    require(!line.empty() && line.back() == '\n');
    return std::string_view(line).substr(0, line.size() - 1);
}

void check_request(std::string_view text) {
    std::optional<std::int64_t> id;
    const auto request = parse_request(text, kSender, id);
    if (!request) {
        require(!request.error().str().empty());
        return;
    }
    require(request->uid == kSender && request->route.empty());
    require(id == request->id);
    std::optional<std::int64_t> again_id;
    const auto again = parse_request(without_newline(encode_request(*request)), kSender, again_id);
    require(again && *again == *request);
}

void check_message(std::string_view text) {
    std::optional<std::int64_t> id;
    const auto message = parse_message(text, id);
    if (!message) {
        require(!message.error().str().empty());
        return;
    }
    require(id == message->id);
    std::optional<std::int64_t> again_id;
    const auto again = parse_message(without_newline(encode_message(*message)), again_id);
    require(again && *again == *message);
    // What a broker sends a client leaves out the uid and the route.
    const auto as_request =
        parse_request(without_newline(encode_request(*message)), kSender, again_id);
    require(as_request && as_request->uid == kSender && as_request->route.empty());
}

void check_reply(std::string_view text) {
    const auto reply = parse_reply(text);
    if (!reply) {
        require(!reply.error().str().empty());
        return;
    }
    require(reply->result.has_value() != reply->message.has_value());
    const auto again = parse_reply(without_newline(encode_reply(*reply)));
    require(again && *again == *reply);
}

void check_lines(std::string_view text) {
    LineBuffer buffer;
    std::string joined;
    // Fed in pieces of growing sizes, so that lines cross the pieces.
    for (std::size_t at = 0, piece = 1; at < text.size(); at += piece, ++piece) {
        const std::string_view bytes = text.substr(at, piece);
        buffer.append(bytes.data(), bytes.size());
        while (auto line = buffer.next_line())
            joined += *line + '\n';
    }
    require(!buffer.overflowed());
    joined += buffer.take_rest();
    require(joined == text && buffer.size() == 0);
}

void check_certificate(std::string_view text) {
    const auto certificate = parse_certificate(text, "fuzz.cert");
    if (!certificate) {
        const std::string line = certificate.error().str();
        require(!line.empty() && line.find('\n') == std::string::npos);
        return;
    }
    require(is_key(certificate->public_key) && is_key(certificate->secret_key));
    require(certificate->public_key != certificate->secret_key);
    const auto again = parse_certificate(encode_certificate(*certificate), "fuzz.cert");
    require(again && *again == *certificate);
}

// A configuration either parses, with a host per rank and an address per
// host, or gives one line naming the file.
void check_config(std::string_view text) {
    const auto config = gantry::overlay::parse_config(text, "fuzz.json");
    if (!config) {
        const std::string line = config.error().str();
        require(line.starts_with("config: fuzz.json") && line.find('\n') == std::string::npos);
        return;
    }
    require(!config->hosts.empty() && config->hosts.size() == config->addresses.size());
    require(config->port >= 1 && config->fanout >= 1 && !config->certificate.empty());
    for (std::size_t rank = 0; rank < config->hosts.size(); ++rank)
        require(config->rank_of(config->hosts[rank]).value() == rank);
}

}  // namespace

// A broker's bootstrap entry (a KVS value, a line of the launcher's
// stream): encoded again it parses back to itself; an error is one line.
void check_address(std::string_view text) {
    const auto address = parse_address("entry", text);
    if (!address) {
        require(address.error().str().find('\n') == std::string::npos ||
                text.find('\n') != std::string_view::npos);
        return;
    }
    const auto again = parse_address("entry", encode_address(*address));
    require(again && *again == *address);
}

// The launch agent's words: none empty, none holding a blank.
void check_launch_agent(std::string_view text) {
    const auto words = parse_launch_agent(text);
    if (!words)
        return;
    require(!words->empty());
    for (const std::string& word : *words)
        require(!word.empty() && word.find_first_of(" \t") == std::string::npos);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    check_request(text);
    check_message(text);
    check_reply(text);
    check_lines(text);
    check_certificate(text);
    check_config(text);
    check_address(text);
    check_launch_agent(text);
    return 0;
}
