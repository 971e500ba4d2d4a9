// `gantry keygen`: make the CURVE certificate of a configured instance.
// Reference: docs/commands/keygen.md.
#include <iostream>
#include <string>
#include <string_view>

#include "cli/command.h"
#include "overlay/certificate.h"

namespace gantry::cli {

namespace {

constexpr std::string_view kExamples = R"(Examples:
  $ gantry keygen curve.cert
  $ stat -c %a curve.cert
  600

The file holds the instance's key pair; `gantry start --config FILE` reads it
from the path FILE's "certificate" names, on every host. It is refused when
group or others can read it.)";

}  // namespace

int keygen_main(int argc, char** argv) {
    CLI::App app(
        "Make a CURVE key pair for the brokers of a configured instance and write it "
        "to FILE (mode 0600; an existing FILE is replaced).",
        "keygen");
    app.footer(std::string(kExamples));
    std::string path;
    app.add_option("FILE", path, "Where to write the certificate")->required()->type_name("");
    if (const auto code = parse_options(app, argc, argv))
        return *code;
    auto certificate = overlay::make_certificate();
    if (!certificate)
        return fail(certificate.error());
    if (auto written = overlay::write_certificate(path, *certificate); !written) {
        fail(written.error());
        return kExitRuntime;
    }
    return kExitOk;
}

}  // namespace gantry::cli
