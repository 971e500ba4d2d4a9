#include "support/instance.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "support/process.h"

namespace gantry::test {

Background::Background(const std::vector<std::string>& argv, const ScratchDir& dir,
                       const std::string& input_file)
    : out_(dir / ("out." + std::to_string(++count_))),
      err_(dir / ("err." + std::to_string(count_))) {
    pid_ = ::fork();
    if (pid_ == 0) {
        const int in = ::open(input_file.c_str(), O_RDONLY);
        const int out = ::open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        const int err = ::open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        ::dup2(in, 0);
        ::dup2(out, 1);
        ::dup2(err, 2);
        std::vector<char*> args;
        for (const std::string& arg : argv)
            args.push_back(const_cast<char*>(arg.c_str()));
        args.push_back(nullptr);
        ::execvp(args[0], args.data());
        ::_exit(127);
    }
}

Background::~Background() {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
}

void Background::signal(int number) const {
    ::kill(pid_, number);
}

bool Background::catches(int number) const {
    return test::catches(pid_, number);
}

std::string Background::out() const {
    return read_file(out_);
}

CommandResult Background::finish() {
    CommandResult result;
    int status = 0;
    const bool ended = eventually([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; });
    EXPECT_TRUE(ended) << "still running after 20 s";
    if (!ended)
        return result;
    pid_ = -1;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.out = read_file(out_);
    result.err = read_file(err_);
    return result;
}

DaemonInstance::DaemonInstance(std::string state_dir) : state_dir_(std::move(state_dir)) {
    const auto started = run_gantry({"start", "--daemon", "--state-dir", state_dir_});
    EXPECT_EQ(started.exit_code, 0) << started.err;
    EXPECT_EQ(started.err, "");
    const std::string uri = "unix://" + socket();
    EXPECT_EQ(started.out, uri + "\n");
    if (started.exit_code != 0)
        return;
    uri_ = uri;
    pid_ = info().value("pid", pid_t{-1});
    EXPECT_GT(pid_, 0) << "no pid in gantry instance info";
}

nlohmann::json DaemonInstance::info() const {
    const auto info = run_gantry({"instance", "info", "--json", "--uri", uri_});
    EXPECT_EQ(info.exit_code, 0) << info.err;
    const auto document = nlohmann::json::parse(info.out, nullptr, false);
    return document.is_object() ? document : nlohmann::json::object();
}

DaemonInstance::~DaemonInstance() {
    if (uri_.empty())
        return;
    if (exists(socket())) {  // not already shut down by the test
        const auto shutdown = run_gantry({"shutdown", "--uri", uri_});
        EXPECT_EQ(shutdown.exit_code, 0) << shutdown.err;
    }
    if (pid_ > 0 && !eventually([&] { return ended(pid_); })) {
        ADD_FAILURE() << "the daemon outlived its shutdown";
        ::kill(pid_, SIGKILL);
    }
}

std::vector<std::string> DaemonInstance::command(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"env", "GANTRY_URI=" + uri_};
    argv.insert(argv.end(), environment_.begin(), environment_.end());
    argv.push_back(gantry_binary());
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

CommandResult DaemonInstance::gantry(const std::vector<std::string>& args,
                                     const std::string& input) const {
    return run_program(command(args), input);
}

void DaemonInstance::expect(const std::vector<std::string>& args, const std::string& out,
                            const std::string& err, int exit_code, const std::string& input) const {
    const auto result = gantry(args, input);
    EXPECT_EQ(result.out, out) << "gantry " << testing::PrintToString(args);
    EXPECT_EQ(result.err, err) << "gantry " << testing::PrintToString(args);
    EXPECT_EQ(result.exit_code, exit_code) << "gantry " << testing::PrintToString(args);
}

std::string DaemonInstance::submit(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"submit"};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto result = gantry(argv);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.err, "");
    const std::string id = result.out.substr(0, result.out.find('\n'));
    EXPECT_TRUE(!id.empty() && id[0] != '0' && result.out == id + "\n" &&
                id.find_first_not_of("0123456789") == std::string::npos)
        << "not an id: " << result.out;
    return id;
}

nlohmann::json DaemonInstance::job(const std::string& id) const {
    const auto document = nlohmann::json::parse(gantry({"info", "--json", id}).out, nullptr, false);
    return document.is_object() ? document : nlohmann::json::object();
}

std::string DaemonInstance::job_state(const std::string& id) const {
    return job(id).value("state", "");
}

}  // namespace gantry::test
