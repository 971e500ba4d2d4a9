// CURVE certificates: new key pairs, the file's text both ways, and the file
// itself: mode 0600 on write, refused when others may read it, replaced in
// one step.
#include "overlay/certificate.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/scratch.h"

namespace gantry {
namespace {

using overlay::Certificate;

// The server key pair of ZeroMQ's CURVE examples (RFC 26's test keys).
const Certificate kServer = {"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7",
                             "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"};
// The client key pair of the same examples.
const Certificate kClient = {"Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID",
                             "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs"};

const std::string kServerText =
    "# gantry overlay certificate: keep it private (mode 0600)\n"
    "public-key = \"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7\"\n"
    "secret-key = \"JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6\"\n";

unsigned mode_of(const std::string& path) {
    struct stat status {};
    EXPECT_EQ(::stat(path.c_str(), &status), 0) << path;
    return status.st_mode & 07777;
}

TEST(Certificate, NewKeyPairsRoundTrip) {
    const auto first = overlay::make_certificate();
    const auto second = overlay::make_certificate();
    ASSERT_TRUE(first) << first.error().str();
    ASSERT_TRUE(second) << second.error().str();
    EXPECT_EQ(first->public_key.size(), 40u);
    EXPECT_EQ(first->secret_key.size(), 40u);
    EXPECT_NE(*first, *second);
    EXPECT_TRUE(overlay::is_key(first->public_key));
    const auto again = overlay::parse_certificate(overlay::encode_certificate(*first), "new");
    ASSERT_TRUE(again) << again.error().str();
    EXPECT_EQ(*again, *first);
}

TEST(Certificate, Text) {
    EXPECT_EQ(overlay::encode_certificate(kServer), kServerText);
    EXPECT_EQ(overlay::parse_certificate(kServerText, "server.cert").value(), kServer);
    // Comments, blank lines, spaces, CRLF line ends, either order.
    const std::string loose =
        "\r\n  # keys\r\n\tsecret-key=\"D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs\"  \r\n"
        "public-key   =   \"Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID\"";
    EXPECT_EQ(overlay::parse_certificate(loose, "client.cert").value(), kClient);
}

TEST(Certificate, BadTexts) {
    const std::string pub = "public-key = \"" + kServer.public_key + "\"\n";
    const std::string sec = "secret-key = \"" + kServer.secret_key + "\"\n";
    struct Case {
        std::string text;
        std::string error;
    };
    const Case cases[] = {
        {"public-key \"x\"\n", "certificate: line 1 of \"node.cert\": expected KEY = \"VALUE\""},
        {"# mine\n\npubkey = \"x\"\n",
         "certificate: line 3 of \"node.cert\": unknown key \"pubkey\""},
        {pub + sec + pub, "certificate: line 3 of \"node.cert\": \"public-key\" given twice"},
        {"public-key = " + kServer.public_key + "\n",
         "certificate: line 1 of \"node.cert\": \"public-key\"'s value is not in double quotes"},
        {pub + "secret-key = \"abc\"\n",
         "certificate: line 2 of \"node.cert\": \"secret-key\" is not a CURVE key (40 characters "
         "of Z85)"},
        {pub + "secret-key = \"JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh~\"\n",
         "certificate: line 2 of \"node.cert\": \"secret-key\" is not a CURVE key (40 characters "
         "of Z85)"},
        {pub, "certificate: \"node.cert\" has no \"secret-key\""},
        {"", "certificate: \"node.cert\" has no \"public-key\""},
        {"public-key = \"" + kClient.public_key + "\"\n" + sec,
         "certificate: \"node.cert\": its public key is not its secret key's"},
    };
    for (const Case& c : cases) {
        const auto parsed = overlay::parse_certificate(c.text, "node.cert");
        ASSERT_FALSE(parsed) << c.text;
        EXPECT_EQ(parsed.error().str(), c.error) << c.text;
        // An error never shows a secret key.
        EXPECT_EQ(parsed.error().str().find(kServer.secret_key), std::string::npos);
    }
}

TEST(Certificate, FileRoundTripWithMode0600) {
    test::ScratchDir dir("certificate");
    const std::string path = dir / "node.cert";
    ASSERT_TRUE(overlay::write_certificate(path, kServer));
    EXPECT_EQ(mode_of(path), 0600u);
    EXPECT_EQ(test::read_file(path), kServerText);
    EXPECT_EQ(overlay::read_certificate(path).value(), kServer);
    // Written again: replaced, still 0600, and nothing else in the directory.
    ASSERT_TRUE(overlay::write_certificate(path, kClient));
    EXPECT_EQ(mode_of(path), 0600u);
    EXPECT_EQ(overlay::read_certificate(path).value(), kClient);
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.path()))
        ++entries;
    EXPECT_EQ(entries, 1u);
}

TEST(Certificate, RefusesAFileOthersCanRead) {
    test::ScratchDir dir("certificate");
    const std::string path = dir / "node.cert";
    ASSERT_TRUE(overlay::write_certificate(path, kServer));
    ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
    const auto read = overlay::read_certificate(path);
    ASSERT_FALSE(read);
    EXPECT_EQ(read.error().str(),
              "certificate: \"" + path + "\" is open to group or others (mode 0644): chmod 600 it");
    ASSERT_EQ(::chmod(path.c_str(), 0620), 0);
    EXPECT_EQ(overlay::read_certificate(path).error().str(),
              "certificate: \"" + path + "\" is open to group or others (mode 0620): chmod 600 it");
}

TEST(Certificate, ReadErrors) {
    test::ScratchDir dir("certificate");
    const auto missing = overlay::read_certificate(dir / "none.cert");
    ASSERT_FALSE(missing);
    EXPECT_TRUE(missing.error().is_not_found());
    EXPECT_EQ(missing.error().str(),
              "certificate: \"" + (dir / "none.cert") + "\": No such file or directory");
    ASSERT_EQ(::chmod(dir.path().c_str(), 0700), 0);
    EXPECT_EQ(overlay::read_certificate(dir.path()).error().str(),
              "certificate: \"" + dir.path() + "\" is not a regular file");
    // Errors in the text name the file.
    const std::string bad = dir / "bad.cert";
    ASSERT_TRUE(overlay::write_certificate(bad, kServer));
    {
        std::FILE* file = std::fopen(bad.c_str(), "a");
        ASSERT_NE(file, nullptr);
        std::fputs("colour = \"blue\"\n", file);
        std::fclose(file);
    }
    EXPECT_EQ(overlay::read_certificate(bad).error().str(),
              "certificate: line 4 of \"" + bad + "\": unknown key \"colour\"");
}

TEST(Certificate, AFailedWriteLeavesNothing) {
    test::ScratchDir dir("certificate");
    const std::string nowhere = dir / "missing/node.cert";
    const auto status = overlay::write_certificate(nowhere, kServer);
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().str(),
              "certificate: cannot write \"" + nowhere + "\": No such file or directory");
    EXPECT_FALSE(test::exists(nowhere));
    // The rename fails (a directory is in the way): the temporary file goes.
    const std::string in_the_way = dir / "node.cert";
    ASSERT_EQ(::mkdir(in_the_way.c_str(), 0700), 0);
    const auto over = overlay::write_certificate(in_the_way, kServer);
    ASSERT_FALSE(over);
    EXPECT_EQ(over.error().str(),
              "certificate: cannot write \"" + in_the_way + "\": Is a directory");
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
        names.push_back(entry.path().filename());
    EXPECT_EQ(names, std::vector<std::string>{"node.cert"});
    EXPECT_TRUE(std::filesystem::is_directory(in_the_way));
}

}  // namespace
}  // namespace gantry
