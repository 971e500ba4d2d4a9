#include "overlay/certificate.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "util/file.h"

namespace gantry::overlay {

namespace {

constexpr std::string_view kDomain = "certificate";
constexpr std::string_view kPublicKey = "public-key";
constexpr std::string_view kSecretKey = "secret-key";

Error invalid(std::string message) {
    return Error(std::string(kDomain), std::move(message));
}

std::string_view trim(std::string_view text) {
    const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
    while (!text.empty() && space(text.front()))
        text.remove_prefix(1);
    while (!text.empty() && space(text.back()))
        text.remove_suffix(1);
    return text;
}

// The 32 bytes of a Z85 key, if it is one.
std::optional<std::array<std::uint8_t, 32>> decode_key(std::string_view key) {
    if (key.size() != kKeyLength)
        return std::nullopt;
    const std::string text(key);  // zmq_z85_decode reads up to a NUL
    if (text.find('\0') != std::string::npos)
        return std::nullopt;
    std::array<std::uint8_t, 32> bytes{};
    if (!zmq_z85_decode(bytes.data(), text.c_str()))
        return std::nullopt;
    // A Z85 text decodes only when its characters are the alphabet's.
    std::array<char, kKeyLength + 1> again{};
    if (!zmq_z85_encode(again.data(), bytes.data(), bytes.size()) || text != again.data())
        return std::nullopt;
    return bytes;
}

std::string mode_text(mode_t mode) {
    char text[8];
    std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
    return text;
}

}  // namespace

bool is_key(std::string_view key) {
    return decode_key(key).has_value();
}

Result<Certificate> make_certificate() {
    std::array<char, kKeyLength + 1> public_key{};
    std::array<char, kKeyLength + 1> secret_key{};
    if (zmq_curve_keypair(public_key.data(), secret_key.data()) != 0)
        return Error::system(std::string(kDomain),
                             std::string("cannot make a key pair: ") + zmq_strerror(zmq_errno()));
    return Certificate{public_key.data(), secret_key.data()};
}

std::string encode_certificate(const Certificate& certificate) {
    return "# gantry overlay certificate: keep it private (mode 0600)\n" + std::string(kPublicKey) +
           " = \"" + certificate.public_key + "\"\n" + std::string(kSecretKey) + " = \"" +
           certificate.secret_key + "\"\n";
}

Result<Certificate> parse_certificate(std::string_view text, std::string_view name) {
    std::optional<std::string> public_key;
    std::optional<std::string> secret_key;
    unsigned number = 0;
    while (!text.empty()) {
        ++number;
        const std::size_t end = text.find('\n');
        const std::string_view line = trim(text.substr(0, end));
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
        const std::string where = "line " + std::to_string(number) + " of " + quote(name) + ": ";
        if (line.empty() || line.front() == '#')
            continue;
        const std::size_t equals = line.find('=');
        if (equals == std::string_view::npos)
            return invalid(where + "expected KEY = \"VALUE\"");
        const std::string_view key = trim(line.substr(0, equals));
        std::optional<std::string>* slot = key == kPublicKey   ? &public_key
                                           : key == kSecretKey ? &secret_key
                                                               : nullptr;
        if (!slot)
            return invalid(where + "unknown key " + quote(key));
        if (slot->has_value())
            return invalid(where + quote(key) + " given twice");
        const std::string_view value = trim(line.substr(equals + 1));
        if (value.size() < 2 || value.front() != '"' || value.back() != '"')
            return invalid(where + quote(key) + "'s value is not in double quotes");
        const std::string_view inner = value.substr(1, value.size() - 2);
        if (!is_key(inner))
            return invalid(where + quote(key) + " is not a CURVE key (40 characters of Z85)");
        *slot = std::string(inner);
    }
    for (const auto& [key, slot] : {std::pair{kPublicKey, &public_key}, {kSecretKey, &secret_key}})
        if (!slot->has_value())
            return invalid(quote(name) + " has no " + quote(key));
    std::array<char, kKeyLength + 1> derived{};
    if (zmq_curve_public(derived.data(), secret_key->c_str()) != 0)
        return Error::system(
            std::string(kDomain),
            quote(name) + ": cannot derive its public key: " + zmq_strerror(zmq_errno()));
    if (*public_key != derived.data())
        return invalid(quote(name) + ": its public key is not its secret key's");
    return Certificate{std::move(*public_key), std::move(*secret_key)};
}

Result<Certificate> read_certificate(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        const int error = errno;
        std::string message = quote(path) + ": " + std::strerror(error);
        return error == ENOENT ? Error::not_found(std::string(kDomain), std::move(message))
                               : Error::system(std::string(kDomain), std::move(message));
    }
    struct stat status {};
    std::string text;
    int error = ::fstat(fd, &status) != 0 ? errno : 0;
    if (!error && !S_ISREG(status.st_mode)) {
        ::close(fd);
        return invalid(quote(path) + " is not a regular file");
    }
    if (!error && (status.st_mode & 077) != 0) {
        ::close(fd);
        return invalid(quote(path) + " is open to group or others (mode " +
                       mode_text(status.st_mode) + "): chmod 600 it");
    }
    if (!error)
        error = read_all(fd, text);
    ::close(fd);
    if (error)
        return Error::system(std::string(kDomain), quote(path) + ": " + std::strerror(error));
    return parse_certificate(text, path);
}

Status write_certificate(const std::string& path, const Certificate& certificate) {
    const auto failed = [&](int error) {
        return Error::system(std::string(kDomain),
                             "cannot write " + quote(path) + ": " + std::strerror(error));
    };
    // mkstemp creates the file with mode 0600, in the same directory so
    // that rename(2) replaces `path` in one step.
    std::string temporary = path + ".XXXXXX";
    const int fd = ::mkstemp(temporary.data());
    if (fd < 0)
        return failed(errno);
    int error = ::fchmod(fd, 0600) != 0 ? errno : 0;
    if (!error)
        error = write_all(fd, encode_certificate(certificate));
    if (!error && ::fsync(fd) != 0)
        error = errno;
    if (::close(fd) != 0 && !error)
        error = errno;
    if (!error && ::rename(temporary.c_str(), path.c_str()) != 0)
        error = errno;
    if (error) {
        ::unlink(temporary.c_str());
        return failed(error);
    }
    return {};
}

}  // namespace gantry::overlay
