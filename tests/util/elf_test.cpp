#include "util/elf.h"

#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace gantry {
namespace {

// A small dynamic ELF image: a header, a PT_LOAD segment mapping the whole
// file at address 0x400000, a PT_DYNAMIC segment, and a string table
// holding `names`, each named by a DT_NEEDED entry.
std::string elf_naming(const std::vector<std::string>& names) {
    constexpr std::uint64_t kBase = 0x400000;
    std::string strings(1, '\0');
    std::vector<std::uint64_t> offsets;
    for (const std::string& name : names) {
        offsets.push_back(strings.size());
        strings += name + '\0';
    }
    const std::uint64_t phoff = sizeof(Elf64_Ehdr);
    const std::uint64_t dynoff = phoff + 2 * sizeof(Elf64_Phdr);
    const std::uint64_t ndyn = names.size() + 3;
    const std::uint64_t stroff = dynoff + ndyn * sizeof(Elf64_Dyn);
    const std::uint64_t total = stroff + strings.size();

    Elf64_Ehdr header{};
    std::memcpy(header.e_ident, ELFMAG, SELFMAG);
    header.e_ident[EI_CLASS] = ELFCLASS64;
    header.e_ident[EI_DATA] = ELFDATA2LSB;
    header.e_ident[EI_VERSION] = EV_CURRENT;
    header.e_type = ET_EXEC;
    header.e_machine = EM_X86_64;
    header.e_phoff = phoff;
    header.e_phentsize = sizeof(Elf64_Phdr);
    header.e_phnum = 2;
    Elf64_Phdr load{};
    load.p_type = PT_LOAD;
    load.p_vaddr = kBase;
    load.p_filesz = total;
    Elf64_Phdr dynamic{};
    dynamic.p_type = PT_DYNAMIC;
    dynamic.p_offset = dynoff;
    dynamic.p_filesz = ndyn * sizeof(Elf64_Dyn);
    std::vector<Elf64_Dyn> entries;
    for (const std::uint64_t offset : offsets)
        entries.push_back({DT_NEEDED, {offset}});
    entries.push_back({DT_STRTAB, {kBase + stroff}});
    entries.push_back({DT_STRSZ, {strings.size()}});
    entries.push_back({DT_NULL, {0}});

    std::string image;
    image.append(reinterpret_cast<const char*>(&header), sizeof header);
    image.append(reinterpret_cast<const char*>(&load), sizeof load);
    image.append(reinterpret_cast<const char*>(&dynamic), sizeof dynamic);
    image.append(reinterpret_cast<const char*>(entries.data()), entries.size() * sizeof(Elf64_Dyn));
    image += strings;
    return image;
}

std::string file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    return bytes.str();
}

TEST(NeededLibraries, InFileOrder) {
    EXPECT_EQ(needed_libraries(elf_naming({"libpmix.so.2", "libc.so.6"})).value(),
              (std::vector<std::string>{"libpmix.so.2", "libc.so.6"}));
    EXPECT_EQ(needed_libraries(elf_naming({})).value(), std::vector<std::string>());
}

// Debian's own programs, as `readelf -d` lists them.
TEST(NeededLibraries, RealPrograms) {
    EXPECT_EQ(needed_libraries(file_bytes("/usr/bin/true")).value(),
              std::vector<std::string>{"libc.so.6"});
    // Static (a static PIE): a dynamic segment that names nothing.
    EXPECT_EQ(needed_libraries(file_bytes("/sbin/ldconfig")).value(), std::vector<std::string>());
}

TEST(NeededLibraries, BadInput) {
    const auto error = [](std::string_view image) { return needed_libraries(image).error().str(); };
    EXPECT_EQ(error(""), "elf: not a 64-bit little-endian ELF file");
    EXPECT_EQ(error("#!/bin/sh\nexec true\n"), "elf: not a 64-bit little-endian ELF file");
    const std::string image = elf_naming({"libc.so.6"});
    EXPECT_EQ(error(image.substr(0, sizeof(Elf64_Ehdr))),
              "elf: program header 0 at offset 64 ends beyond the file's 64 bytes");
    EXPECT_EQ(error(image.substr(0, sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Phdr) + 8)),
              "elf: the dynamic segment at offset 176 ends beyond the file's 184 bytes");
    // The string table cut short: its name runs past the end.
    EXPECT_EQ(error(image.substr(0, image.size() - 3)),
              "elf: the string table at offset 240 ends beyond the file's 248 bytes");
    std::string unterminated = image;
    unterminated.back() = 'x';
    EXPECT_EQ(error(unterminated),
              "elf: library name 1 of the string table at offset 240 ends beyond the file's 251 "
              "bytes");
}

}  // namespace
}  // namespace gantry
