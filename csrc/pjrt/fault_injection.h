// Test-only fault injection: the next `count` operations at a site fail as a
// failing plugin or device would, so tests can check that such errors surface
// as Python exceptions naming the op and leave later work intact. An
// injected execution failure is asynchronous, as a device's is: the call
// returns, its completion event and its results carry the error, and programs
// that read those results pass it on (PJRT's own error propagation).
#pragma once

namespace torch_tpu::pjrt {

enum class FaultSite { Compile, Execute, HostToDevice, DeviceToHost };

void inject_faults(FaultSite site, int count);
// Consumes one injected fault at `site`: true when this call must fail. One
// relaxed atomic load when nothing is injected.
bool take_fault(FaultSite site);

}  // namespace torch_tpu::pjrt
