// A broker's CURVE key pair, which the overlay between brokers encrypts and
// authenticates with, and the small text file that keeps it:
//
//   # gantry overlay certificate: keep it private (mode 0600)
//   public-key = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
//   secret-key = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"
//
// docs/overlay.md describes the format.
#pragma once

#include <string>
#include <string_view>

#include "util/error.h"

namespace gantry::overlay {

// The length of a CURVE key in Z85 text (32 bytes).
inline constexpr std::size_t kKeyLength = 40;

// A CURVE key pair, each key Z85 text of kKeyLength characters.
struct Certificate {
    std::string public_key;
    std::string secret_key;
    bool operator==(const Certificate&) const = default;
};

// A new key pair (zmq_curve_keypair). Error: when libzmq was built
// without CURVE.
Result<Certificate> make_certificate();

// Whether `key` is a CURVE key in Z85 text: 40 characters that decode to
// 32 bytes.
bool is_key(std::string_view key);

// The certificate's file text: a comment line, then "public-key" and
// "secret-key" lines.
std::string encode_certificate(const Certificate& certificate);
// A certificate file's text; `name` names it in errors, with the line:
// `certificate: line 2 of "node.cert": unknown key "pubkey"`. Both keys are
// required, once each, and the public key must be the secret key's.
// Errors never quote a key's value.
Result<Certificate> parse_certificate(std::string_view text, std::string_view name);

// The certificate at `path`. Refused unless only its owner may read or
// write it: `certificate: "node.cert" is open to group or others (mode
// 0644): chmod 600 it`.
Result<Certificate> read_certificate(const std::string& path);
// Writes the certificate to `path` with mode 0600, through a temporary file
// in the same directory renamed over it: after a failure, `path` is as it
// was and no temporary file is left.
Status write_certificate(const std::string& path, const Certificate& certificate);

}  // namespace gantry::overlay
