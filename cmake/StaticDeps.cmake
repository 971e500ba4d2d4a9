# Third-party libraries linked into the gantry executables from their
# static archives, where the system has them (Debian's -dev packages do).
#
# Why: every `gantry` process pays at its start for each shared library it
# loads, each mapped and its symbols resolved by ld.so, and libzmq.so brings
# 15 of its own (OpenPGM, NORM, Kerberos, libsodium, libbsd, libstdc++...).
# Linked from archives, libzmq, SQLite and those that have one go: `gantry
# --version` took 1.97 ms of CPU with 22 libraries and takes 1.21 ms with 12 (docs/benchmarks.md, "Static third-party libraries"). A launch
# across hosts starts a gantry here and a broker on each host, one after
# the other on its critical path. hwloc stays shared (see CMakeLists.txt).
#
# Only the executables that set the target property GANTRY_STATIC_DEPS get
# the archives; the tests and benchmarks link the shared libraries, as do
# the sanitizer and fuzz builds (whose runtimes bring their own operator new
# and interpose the allocator).
#
# gantry_dependency(NAME PREFIX) makes the INTERFACE library NAME from what
# pkg_check_modules(PREFIX IMPORTED_TARGET ...) found: PkgConfig::PREFIX for
# the targets without the property; for those with it, each library of
# pkg-config's --static list as its archive, and as a shared library where
# it has none (Kerberos). The C and C++ runtimes stay shared (the
# C++ one is linked in by -static-libstdc++ already).

# Libraries of the toolchain and of glibc: never from an archive.
set(GANTRY_RUNTIME_LIBRARIES c m dl rt pthread stdc++ gcc gcc_s)

function(gantry_static_list out prefix)
    set(names ${${prefix}_STATIC_LIBRARIES})
    # An archive that pkg-config names as a file (NORM's libprotokit.a):
    # after the libraries, NORM among them, that use it.
    foreach(flag IN LISTS ${prefix}_STATIC_LDFLAGS_OTHER)
        if(flag MATCHES "^lib(.+)\\.a$")
            list(APPEND names "${CMAKE_MATCH_1}")
        endif()
    endforeach()
    set(list)
    set(missing)
    foreach(name IN LISTS names)
        if(name IN_LIST GANTRY_RUNTIME_LIBRARIES)
            continue()
        endif()
        string(MAKE_C_IDENTIFIER "GANTRY_ARCHIVE_${name}" variable)
        find_library(${variable} NAMES lib${name}.a HINTS ${${prefix}_STATIC_LIBRARY_DIRS})
        if(${variable})
            list(APPEND list "${${variable}}")
        else()
            list(APPEND list "${name}")
            list(APPEND missing "${name}")
        endif()
    endforeach()
    if(missing)
        message(STATUS "${prefix}: shared, for want of an archive: ${missing}")
    endif()
    set(${out} ${list} PARENT_SCOPE)
endfunction()

function(gantry_dependency name prefix)
    add_library(${name} INTERFACE)
    if(GANTRY_SANITIZE OR GANTRY_FUZZ)
        target_link_libraries(${name} INTERFACE PkgConfig::${prefix})
        return()
    endif()
    gantry_static_list(archives ${prefix})
    # For the test that the executable loads no shared copy (tests/cli/main_test.cpp).
    list(GET ${prefix}_STATIC_LIBRARIES 0 main)
    string(MAKE_C_IDENTIFIER "GANTRY_ARCHIVE_${main}" variable)
    if(${variable})
        set_property(GLOBAL APPEND PROPERTY GANTRY_ARCHIVES_LINKED ${main})
    endif()
    target_include_directories(${name} INTERFACE ${${prefix}_INCLUDE_DIRS})
    target_compile_options(${name} INTERFACE ${${prefix}_CFLAGS_OTHER})
    # One expression a library: a list inside one would be cut at its ';'.
    set(static "$<BOOL:$<TARGET_PROPERTY:GANTRY_STATIC_DEPS>>")
    foreach(archive IN LISTS archives)
        target_link_libraries(${name} INTERFACE "$<${static}:${archive}>")
    endforeach()
    target_link_libraries(${name} INTERFACE "$<$<NOT:${static}>:PkgConfig::${prefix}>")
endfunction()

# For an executable: the archives, and of the shared libraries only those
# it uses (an archive's pkg-config list names more than its objects need).
function(gantry_link_static_deps target)
    if(GANTRY_SANITIZE OR GANTRY_FUZZ)
        return()
    endif()
    set_target_properties(${target} PROPERTIES GANTRY_STATIC_DEPS ON)
    target_link_options(${target} PRIVATE -Wl,--as-needed)
endfunction()
