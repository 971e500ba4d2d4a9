// The configuration of an instance whose brokers are started one per host.
#include "overlay/config.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace gantry::overlay {
namespace {

TEST(Config, AllItsKeys) {
    const auto config = parse_config(
        R"({"hosts":"node[0-2]","addresses":["10.9.0.1","10.9.0.2","fe80::1"],"port":8050,)"
        R"("certificate":"/etc/gantry/curve","fanout":3,)"
        R"("properties":{"gpu":"node[1-2]","big mem":"node0","none":""}})",
        "a.json");
    ASSERT_TRUE(config) << config.error().str();
    EXPECT_EQ(config->hosts, (std::vector<std::string>{"node0", "node1", "node2"}));
    EXPECT_EQ(config->port, 8050);
    EXPECT_EQ(config->certificate, "/etc/gantry/curve");
    EXPECT_EQ(config->fanout, 3u);
    EXPECT_EQ(config->properties,
              (std::map<std::string, IdSet>{
                  {"big mem", IdSet{0}}, {"gpu", IdSet::range(1, 2)}, {"none", IdSet{}}}));
    EXPECT_EQ(config->rank_of("node2").value(), 2u);
    EXPECT_EQ(config->endpoint(0), "tcp://10.9.0.1:8050");
    EXPECT_EQ(config->endpoint(2), "tcp://[fe80::1]:8050");
    EXPECT_EQ(config->rank_of("other").error().str(),
              "config: host \"other\" is not among the configuration's hosts (node[0-2])");
}

TEST(Config, AddressesDefaultToTheHostNamesAndFanoutTo2) {
    const auto config =
        parse_config(R"({"hosts":"a,b","port":1,"certificate":"c"})", "b.json").value();
    EXPECT_EQ(config.addresses, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(config.endpoint(1), "tcp://b:1");
    EXPECT_EQ(config.fanout, 32u);
    EXPECT_TRUE(config.properties.empty());
}

TEST(Config, BadInputsWithTheirMessages) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"[]", "config: x.json: the configuration is array, expected an object"},
        {R"({"hosts":"a","port":1,"certificate":"c","extra":1})",
         "config: x.json: unknown key \"extra\""},
        {R"({"port":1,"certificate":"c"})", "config: x.json: \"hosts\" must be a hostlist string"},
        {R"({"hosts":"","port":1,"certificate":"c"})", "config: x.json: \"hosts\" names no host"},
        {R"({"hosts":"a,b,a","port":1,"certificate":"c"})",
         "config: x.json: \"hosts\" names a twice (ranks 0 and 2)"},
        {R"({"hosts":"a,b","addresses":["1.2.3.4"],"port":1,"certificate":"c"})",
         "config: x.json: \"addresses\" must be an array of 2 strings, one per host"},
        {R"({"hosts":"a","addresses":["tcp://x"],"port":1,"certificate":"c"})",
         "config: x.json: \"addresses\"[0] is not a host address"},
        {R"({"hosts":"a","port":0,"certificate":"c"})",
         "config: x.json: \"port\" must be a TCP port, 1 to 65535"},
        {R"({"hosts":"a","port":65536,"certificate":"c"})",
         "config: x.json: \"port\" must be a TCP port, 1 to 65535"},
        {R"({"hosts":"a","port":1})",
         "config: x.json: \"certificate\" must be the path of the instance's certificate"},
        {R"({"hosts":"a","port":1,"certificate":"c","fanout":0})",
         "config: x.json: \"fanout\" must be a number from 1 to 1024"},
        {R"({"hosts":"a","port":1,"certificate":"c","properties":["gpu"]})",
         "config: x.json: \"properties\" must be an object of hostlists"},
        {R"({"hosts":"a","port":1,"certificate":"c","properties":{"gpu":1}})",
         "config: x.json: \"properties\".gpu must be a hostlist string"},
        {R"({"hosts":"a","port":1,"certificate":"c","properties":{"g^pu":"a"}})",
         "config: x.json: \"properties\".g^pu: invalid character '^' in property name "
         "\"g^pu\""},
        {R"({"hosts":"a","port":1,"certificate":"c","properties":{"gpu":"b"}})",
         "config: x.json: \"properties\".gpu: host \"b\" is not among the configuration's "
         "hosts (a)"},
        {R"({"hosts":"a","port":1,"certificate":"c","properties":{"gpu":"a[1-"}})",
         "config: x.json: \"properties\".gpu: hostlist: '[' without ']' at offset 1 in "
         "\"a[1-\""},
    };
    for (const auto& [text, message] : cases) {
        const auto config = parse_config(text, "x.json");
        ASSERT_FALSE(config) << text;
        EXPECT_EQ(config.error().str(), message) << text;
    }
    const auto broken = parse_config(R"({"hosts":)", "x.json");
    ASSERT_FALSE(broken);
    EXPECT_TRUE(broken.error().str().starts_with("config: x.json: ")) << broken.error().str();
    EXPECT_EQ(broken.error().str().find('\n'), std::string::npos);
}

TEST(Config, AFileThatCannotBeRead) {
    const auto config = read_config("/nonexistent/gantry.json");
    ASSERT_FALSE(config);
    EXPECT_EQ(config.error().str(),
              "config: cannot read /nonexistent/gantry.json: No such file or directory");
}

}  // namespace
}  // namespace gantry::overlay
