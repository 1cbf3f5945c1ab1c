// Public entry point of the torch-free PJRT runtime layer.
//
// Typical use:
//   auto api = Api::load(locate_plugin(python_sys_path));
//   auto client = Client::create(api);
//   auto x = Buffer::from_host(*client, data, ElementType::F32, {2, 3},
//                              client->addressable_devices()[0]);
//   auto exe = Executable::compile(client, mlir_text);
//   auto result = exe->execute({x.get()}, client->addressable_devices()[0]);
//   result.outputs[0]->to_host(out, sizeof(out));
#pragma once

#include "pjrt/api.h"
#include "pjrt/buffer.h"
#include "pjrt/client.h"
#include "pjrt/compile_options.h"
#include "pjrt/device.h"
#include "pjrt/element_type.h"
#include "pjrt/error.h"
#include "pjrt/event.h"
#include "pjrt/executable.h"
#include "pjrt/plugin_locator.h"
