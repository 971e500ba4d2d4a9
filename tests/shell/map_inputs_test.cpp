// What a broker read to map a job, as the JSON its job shells map it
// with (map_inputs_to_json, map_inputs_from_json).
#include "shell/map_inputs.h"

#include <gtest/gtest.h>

#include <string>

namespace gantry::shell {
namespace {

// What a broker read goes to its job shells exactly: texts byte for byte
// (a NUL, invalid UTF-8), a file that could not be read as such.
TEST(MapInputsJson, TheSameInputsOnTheOtherSide) {
    MapInputs inputs;
    inputs.hostname = "a";
    inputs.names = {"localhost", "10.0.0.1"};
    inputs.files = {{"/w/hosts", {std::string("b slots=2\n\0\xff", 12), std::nullopt}},
                    {"/w/seq", {"", "No such file or directory"}}};
    const Json json = map_inputs_to_json(inputs);
    EXPECT_EQ(to_compact(json), R"({"files":[{"base64":"YiBzbG90cz0yCgD/","path":"/w/hosts"},)"
                                R"({"path":"/w/seq","unreadable":"No such file or directory"}],)"
                                R"("hostname":"a","names":["localhost","10.0.0.1"]})");
    const auto back = map_inputs_from_json(*parse_json("test", to_compact(json)));
    ASSERT_TRUE(back) << back.error().str();
    EXPECT_EQ(back->files, inputs.files);
    EXPECT_EQ(back->hostname, "a");
    EXPECT_EQ(back->names, inputs.names);
    EXPECT_FALSE(back->topology);
}

TEST(MapInputsJson, BadDocumentsAreOneLineNamingTheMember) {
    const auto error_of = [](const std::string& text) {
        const auto parsed = map_inputs_from_json(*parse_json("test", text));
        return parsed ? std::string("accepted") : parsed.error().str();
    };
    const std::string files_shape =
        R"(: expected {"path":TEXT,"base64":TEXT} or {"path":TEXT,"unreadable":TEXT})";
    EXPECT_EQ(error_of("null"), "map_inputs: expected an object, not null");
    EXPECT_EQ(error_of(R"({"names":[],"files":[]})"),
              R"(map_inputs: "hostname": expected a string, not null)");
    EXPECT_EQ(error_of(R"({"hostname":"a","names":[1],"files":[]})"),
              R"(map_inputs: "names": expected strings, found number)");
    EXPECT_EQ(error_of(R"({"hostname":"a","names":[],"files":{}})"),
              R"(map_inputs: "files": expected an array, not object)");
    EXPECT_EQ(error_of(R"({"hostname":"a","names":[],"files":[{"path":"/x"}]})"),
              R"(map_inputs: "files"[0])" + files_shape);
    EXPECT_EQ(
        error_of(R"({"hostname":"a","names":[],"files":[{"path":"/x","base64":"b","more":1}]})"),
        R"(map_inputs: "files"[0])" + files_shape);
    EXPECT_EQ(error_of(R"({"hostname":"a","names":[],"files":[{"path":2,"unreadable":"x"}]})"),
              R"(map_inputs: "files"[0]."path": expected a string, not number)");
    EXPECT_EQ(error_of(R"({"hostname":"a","names":[],"files":[{"path":"/x","base64":"*"}]})")
                  .substr(0, 35),
              R"(map_inputs: "files"[0].base64: base)");
}

}  // namespace
}  // namespace gantry::shell
