// The blocking client where no instance answers; tests/broker/broker_test.cpp
// runs it against a broker.
#include "overlay/client.h"

#include <stdlib.h>

#include <gtest/gtest.h>

#include <string>

namespace gantry {
namespace {

using overlay::Client;

TEST(Client, ConnectErrorsSayWhere) {
    EXPECT_EQ(Client::connect("unix:///nonexistent/socket").error().str(),
              "cannot connect to unix:///nonexistent/socket: No such file or directory");
    EXPECT_EQ(Client::connect("unix:///" + std::string(120, 'x')).error().str(),
              "cannot connect to unix:///" + std::string(120, 'x') +
                  ": the socket path is longer than 107 bytes");
}

TEST(Client, DefaultUriIsGantryUri) {
    ::setenv("GANTRY_URI", "unix:///tmp/x/socket", 1);
    EXPECT_EQ(Client::default_uri().value(), "unix:///tmp/x/socket");
    ::unsetenv("GANTRY_URI");
    EXPECT_EQ(Client::default_uri().error().str(),
              "not inside an instance (GANTRY_URI is not set); give --uri");
}

TEST(Client, ErrorOfLeavesOutTheBrokersPrefix) {
    overlay::Reply reply;
    reply.id = 1;
    reply.message = "gantry: api: no route to rank 1";
    EXPECT_EQ(overlay::error_of(reply).str(), "api: no route to rank 1");
}

}  // namespace
}  // namespace gantry
