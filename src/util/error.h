// The one error type of gantry: what went wrong, in which domain, and where.
//
// Parsers and operations return Result<T>; the command layer prints
// Error::str() as one line on stderr and exits 2 for user errors.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace gantry {

// What kind of failure an error is, so that a caller can act on it without
// reading its words: a bad input is the caller's to fix, a missing thing may
// be expected (a purged job), and a system failure (I/O, SQLite, a system
// call) is the machine's: it may pass, and it is reported as what it is.
enum class ErrorKind { kInvalid, kNotFound, kSystem };

class Error {
public:
    // `domain` names the format or component ("idset", "hostlist", "R").
    Error(std::string domain, std::string message, ErrorKind kind = ErrorKind::kInvalid)
        : domain_(std::move(domain)), message_(std::move(message)), kind_(kind) {}
    static Error not_found(std::string domain, std::string message) {
        return Error(std::move(domain), std::move(message), ErrorKind::kNotFound);
    }
    static Error system(std::string domain, std::string message) {
        return Error(std::move(domain), std::move(message), ErrorKind::kSystem);
    }

    // An error about `input` as a whole: `idset: bad thing in "input"`.
    static Error in(std::string domain, std::string message, std::string_view input);
    // An error at byte `offset` of `input`: `idset: bad thing at offset 3 in "input"`.
    static Error at(std::string domain, std::string message, std::string_view input,
                    std::size_t offset);

    const std::string& domain() const { return domain_; }
    const std::string& message() const { return message_; }
    const std::optional<std::string>& input() const { return input_; }
    const std::optional<std::size_t>& offset() const { return offset_; }
    ErrorKind kind() const { return kind_; }
    bool is_not_found() const { return kind_ == ErrorKind::kNotFound; }
    bool is_system() const { return kind_ == ErrorKind::kSystem; }

    // One printable line, the input quoted with control bytes escaped and
    // long inputs shortened so that a message never spans lines.
    std::string str() const;

    friend bool operator==(const Error&, const Error&) = default;

private:
    std::string domain_;
    std::string message_;
    std::optional<std::string> input_;
    std::optional<std::size_t> offset_;
    ErrorKind kind_ = ErrorKind::kInvalid;
};

// Thrown by Result::value() on an error: a programming error in the caller,
// which tests report with the message.
class BadResultAccess : public std::logic_error {
public:
    explicit BadResultAccess(const Error& e) : std::logic_error(e.str()) {}
};

// A value or an Error.
template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
    Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}

    bool ok() const { return state_.index() == 0; }
    explicit operator bool() const { return ok(); }

    const T& value() const& { return check(), std::get<0>(state_); }
    T& value() & { return check(), std::get<0>(state_); }
    T&& value() && { return check(), std::get<0>(std::move(state_)); }
    const T& operator*() const& { return value(); }
    T& operator*() & { return value(); }
    const T* operator->() const { return &value(); }
    T* operator->() { return &value(); }

    const Error& error() const { return std::get<1>(state_); }

private:
    void check() const {
        if (!ok())
            throw BadResultAccess(error());
    }
    std::variant<T, Error> state_;
};

// Success without a value, or an Error.
template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error) : error_(std::move(error)) {}

    bool ok() const { return !error_; }
    explicit operator bool() const { return ok(); }
    void value() const {
        if (error_)
            throw BadResultAccess(*error_);
    }
    const Error& error() const { return *error_; }

private:
    std::optional<Error> error_;
};

using Status = Result<void>;

// Quote `text` for a one-line message: escapes quotes, backslashes and
// control bytes; inputs longer than `limit` bytes are cut with "...".
std::string quote(std::string_view text, std::size_t limit = 80);

}  // namespace gantry
