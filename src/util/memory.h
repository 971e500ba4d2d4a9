// How this process's allocator treats the large buffers that go through it.
#pragma once

namespace gantry {

// Keeps freed memory for the next allocation rather than giving it back to
// the kernel at once. Output crosses a broker in buffers of up to a few MiB
// (a reply of 1 MiB of output, its base64, its JSON), made and freed many
// times a second; glibc's defaults give such buffers back to the kernel (a
// block mapped on its own, or the heap's top trimmed once a few of them are
// free), so that every next one page-faults its way in again: most of the
// time output took through an instance.
// Blocks of up to 4 MiB come from the heap, which keeps up to 64 MiB free.
// Called first thing in main(); changes nothing under a sanitizer's
// allocator.
void keep_freed_memory();

}  // namespace gantry
