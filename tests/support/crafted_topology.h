// A topology file that hwloc 2.9 (Debian 12) crashes on: lstopo's XML of a
// 2-core machine where one core has no complete_cpuset, which hwloc's
// reader dereferences without looking (fixed upstream: open-mpi/hwloc#783).
// The tests that read it expect an error, whichever hwloc reads it.
#pragma once

namespace gantry::test {

inline constexpr const char* kXmlHwlocCrashesOn = R"(<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x3" complete_cpuset="0x3" allowed_cpuset="0x3" nodeset="0x1" complete_nodeset="0x1" allowed_nodeset="0x1" gp_index="1">
    <object type="NUMANode" os_index="0" cpuset="0x3" complete_cpuset="0x3" nodeset="0x1" complete_nodeset="0x1" gp_index="2"/>
    <object type="Core" os_index="0" cpuset="0x1" complete_cpuset="0x1" nodeset="0x1" complete_nodeset="0x1" gp_index="3">
      <object type="PU" os_index="0" cpuset="0x1" complete_cpuset="0x1" nodeset="0x1" complete_nodeset="0x1" gp_index="4"/>
    </object>
    <object type="Core" os_index="1" cpuset="0x2" nodeset="0x1" complete_nodeset="0x1" gp_index="5">
      <object type="PU" os_index="1" cpuset="0x2" complete_cpuset="0x2" nodeset="0x1" complete_nodeset="0x1" gp_index="6"/>
    </object>
  </object>
</topology>
)";

}  // namespace gantry::test
