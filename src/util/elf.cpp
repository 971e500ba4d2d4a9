#include "util/elf.h"

#include <elf.h>

#include <cstring>
#include <optional>

namespace gantry {
namespace {

// A T at `offset` of `image`, copied (the image need not be aligned).
template <typename T>
std::optional<T> read_at(std::string_view image, std::uint64_t offset) {
    if (offset > image.size() || image.size() - offset < sizeof(T))
        return std::nullopt;
    T value;
    std::memcpy(&value, image.data() + offset, sizeof(T));
    return value;
}

Error beyond(std::string_view what, std::uint64_t offset, std::size_t size) {
    return Error("elf", std::string(what) + " at offset " + std::to_string(offset) +
                            " ends beyond the file's " + std::to_string(size) + " bytes");
}

// The file offset of virtual address `address`, through the PT_LOAD
// segment that holds it.
std::optional<std::uint64_t> offset_of(const std::vector<Elf64_Phdr>& segments,
                                       std::uint64_t address) {
    for (const Elf64_Phdr& segment : segments)
        if (segment.p_type == PT_LOAD && address >= segment.p_vaddr &&
            address - segment.p_vaddr < segment.p_filesz)
            return segment.p_offset + (address - segment.p_vaddr);
    return std::nullopt;
}

}  // namespace

Result<std::vector<std::string>> needed_libraries(std::string_view image) {
    const auto header = read_at<Elf64_Ehdr>(image, 0);
    if (!header || std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 ||
        header->e_ident[EI_CLASS] != ELFCLASS64 || header->e_ident[EI_DATA] != ELFDATA2LSB)
        return Error("elf", "not a 64-bit little-endian ELF file");
    if (header->e_phentsize != sizeof(Elf64_Phdr))
        return Error("elf", "program headers of " + std::to_string(header->e_phentsize) +
                                " bytes, not " + std::to_string(sizeof(Elf64_Phdr)));

    std::vector<Elf64_Phdr> segments;
    std::optional<Elf64_Phdr> dynamic;
    for (std::uint64_t i = 0; i < header->e_phnum; ++i) {
        const std::uint64_t at = header->e_phoff + i * sizeof(Elf64_Phdr);
        const auto segment = read_at<Elf64_Phdr>(image, at);
        if (!segment)
            return beyond("program header " + std::to_string(i), at, image.size());
        segments.push_back(*segment);
        if (segment->p_type == PT_DYNAMIC)
            dynamic = *segment;
    }
    if (!dynamic)
        return std::vector<std::string>();  // static: needs nothing

    std::vector<std::uint64_t> names;  // offsets into the string table
    std::optional<std::uint64_t> strings_address;
    std::uint64_t strings_size = 0;
    for (std::uint64_t at = dynamic->p_offset; at - dynamic->p_offset < dynamic->p_filesz;
         at += sizeof(Elf64_Dyn)) {
        const auto entry = read_at<Elf64_Dyn>(image, at);
        if (!entry)
            return beyond("the dynamic segment", dynamic->p_offset, image.size());
        if (entry->d_tag == DT_NULL)
            break;
        if (entry->d_tag == DT_NEEDED)
            names.push_back(entry->d_un.d_val);
        else if (entry->d_tag == DT_STRTAB)
            strings_address = entry->d_un.d_ptr;
        else if (entry->d_tag == DT_STRSZ)
            strings_size = entry->d_un.d_val;
    }
    if (names.empty())
        return std::vector<std::string>();
    if (!strings_address)
        return Error("elf", "the dynamic segment at offset " + std::to_string(dynamic->p_offset) +
                                " names libraries but has no string table");
    const auto strings = offset_of(segments, *strings_address);
    if (!strings || *strings > image.size() || image.size() - *strings < strings_size)
        return beyond("the string table", strings.value_or(*strings_address), image.size());

    const std::string_view table = image.substr(*strings, strings_size);
    std::vector<std::string> libraries;
    for (const std::uint64_t name : names) {
        const std::size_t end = name < table.size() ? table.find('\0', name) : std::string::npos;
        if (end == std::string::npos)
            return beyond("library name " + std::to_string(name) + " of the string table", *strings,
                          image.size());
        libraries.emplace_back(table.substr(name, end - name));
    }
    return libraries;
}

}  // namespace gantry
