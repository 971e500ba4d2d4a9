// The PMIx functions server.cpp calls, each forwarding to the library that
// load_library() opened. The executable does not link libpmix, so these are
// the definitions its calls bind to; the library's own calls among its
// functions stay inside it (it is opened RTLD_LOCAL).
#include "pmix/library.h"

#include <dlfcn.h>
#include <pmix.h>
#include <pmix_server.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "util/file.h"

namespace gantry::pmix {
namespace {

// Built in: the library the build found (its soname's path), as the
// dynamic linker would have found it.
constexpr const char* kLibrary = GANTRY_PMIX_LIBRARY;

struct Loaded {
    void* handle = nullptr;
    Status status;
};

const Loaded& loaded() {
    static const Loaded library = [] {
        Loaded opened;
        opened.handle = ::dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
        if (!opened.handle) {
            const char* why = ::dlerror();
            opened.status = Error("pmix", std::string("cannot load ") + kLibrary + ": " +
                                              (why ? why : "unknown error"));
        }
        return opened;
    }();
    return library;
}

// The library's function `name`. Only reached after load_library()
// succeeded (the server's first step); a miss is a build that does not
// match the library, and ends the process with why.
template <typename Function>
Function function(const char* name) {
    void* found = loaded().handle ? ::dlsym(loaded().handle, name) : nullptr;
    if (!found) {
        write_all(STDERR_FILENO, std::string("gantry: pmix: ") + kLibrary + " has no " + name +
                                     " (or was not loaded)\n");
        std::abort();
    }
    return reinterpret_cast<Function>(found);
}

}  // namespace

Status load_library() {
    return loaded().status;
}

}  // namespace gantry::pmix

using gantry::pmix::function;

const char* PMIx_Error_string(pmix_status_t status) {
    static const auto call = function<decltype(&PMIx_Error_string)>("PMIx_Error_string");
    return call(status);
}

pmix_status_t PMIx_Get(const pmix_proc_t* proc, const char key[], const pmix_info_t info[],
                       size_t ninfo, pmix_value_t** val) {
    static const auto call = function<decltype(&PMIx_Get)>("PMIx_Get");
    return call(proc, key, info, ninfo, val);
}

pmix_status_t PMIx_Info_load(pmix_info_t* info, const char* key, const void* data,
                             pmix_data_type_t type) {
    static const auto call = function<decltype(&PMIx_Info_load)>("PMIx_Info_load");
    return call(info, key, data, type);
}

pmix_status_t PMIx_Load_topology(pmix_topology_t* topo) {
    static const auto call = function<decltype(&PMIx_Load_topology)>("PMIx_Load_topology");
    return call(topo);
}

void PMIx_Value_destruct(pmix_value_t* val) {
    static const auto call = function<decltype(&PMIx_Value_destruct)>("PMIx_Value_destruct");
    call(val);
}

pmix_status_t PMIx_generate_ppn(const char* input, char** ppn) {
    static const auto call = function<decltype(&PMIx_generate_ppn)>("PMIx_generate_ppn");
    return call(input, ppn);
}

pmix_status_t PMIx_generate_regex(const char* input, char** regex) {
    static const auto call = function<decltype(&PMIx_generate_regex)>("PMIx_generate_regex");
    return call(input, regex);
}

void PMIx_server_deregister_nspace(const pmix_nspace_t nspace, pmix_op_cbfunc_t cbfunc,
                                   void* cbdata) {
    static const auto call =
        function<decltype(&PMIx_server_deregister_nspace)>("PMIx_server_deregister_nspace");
    call(nspace, cbfunc, cbdata);
}

pmix_status_t PMIx_server_dmodex_request(const pmix_proc_t* proc, pmix_dmodex_response_fn_t cbfunc,
                                         void* cbdata) {
    static const auto call =
        function<decltype(&PMIx_server_dmodex_request)>("PMIx_server_dmodex_request");
    return call(proc, cbfunc, cbdata);
}

pmix_status_t PMIx_server_finalize(void) {
    static const auto call = function<decltype(&PMIx_server_finalize)>("PMIx_server_finalize");
    return call();
}

pmix_status_t PMIx_server_generate_locality_string(const pmix_cpuset_t* cpuset, char** locality) {
    static const auto call = function<decltype(&PMIx_server_generate_locality_string)>(
        "PMIx_server_generate_locality_string");
    return call(cpuset, locality);
}

pmix_status_t PMIx_server_init(pmix_server_module_t* module, pmix_info_t info[], size_t ninfo) {
    static const auto call = function<decltype(&PMIx_server_init)>("PMIx_server_init");
    return call(module, info, ninfo);
}

pmix_status_t PMIx_server_register_client(const pmix_proc_t* proc, uid_t uid, gid_t gid,
                                          void* server_object, pmix_op_cbfunc_t cbfunc,
                                          void* cbdata) {
    static const auto call =
        function<decltype(&PMIx_server_register_client)>("PMIx_server_register_client");
    return call(proc, uid, gid, server_object, cbfunc, cbdata);
}

pmix_status_t PMIx_server_register_nspace(const pmix_nspace_t nspace, int nlocalprocs,
                                          pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                          void* cbdata) {
    static const auto call =
        function<decltype(&PMIx_server_register_nspace)>("PMIx_server_register_nspace");
    return call(nspace, nlocalprocs, info, ninfo, cbfunc, cbdata);
}

pmix_status_t PMIx_server_setup_fork(const pmix_proc_t* proc, char*** env) {
    static const auto call = function<decltype(&PMIx_server_setup_fork)>("PMIx_server_setup_fork");
    return call(proc, env);
}
