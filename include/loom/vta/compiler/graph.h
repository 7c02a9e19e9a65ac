// VTA in the graph compiler (libloom_vta_compiler): its operators, their implementation for the
// vta target, and the graph packing pass the vta target adds to every compile.
//
//   graph::CompileOptions options;
//   options.target = "vta";            // host kernels for this CPU, convolutions on VTA
//   graph::Compile(quantized, options); // a model quantized with the power-of-two scheme
//
// Operators:
//   vta.conv2d_packed(data, weight)  a convolution in VTA's blocked layouts (conv2d.h)
//   vta.alu_imm(x, op, imm)          one ALU instruction with a 16-bit immediate
// A group whose master is vta.conv2d_packed runs on VTA (scheduled by ScheduleConv2DPacked,
// lowered by vta::lower); everything else runs on the host. Its tensors live in VTA's DRAM,
// which the host shares (runtime::DeviceAPI::SharesHostMemory), so no copies are needed.
#pragma once

#include <string>
#include <vector>

#include "loom/graph/transform.h"
#include "loom/vta/compiler/environment.h"

namespace loom::vta {

// PackGraph: each int8 convolution of a power-of-two quantized model (qnn.conv2d of an int8
// NCHW tensor by a constant int8 OIHW weight, zero points 0, groups and dilation 1; or
// qnn.dense of [N, K] by a constant [M, K], as a 1x1 convolution of a 1x1 image) whose
// int32 tail requantizes to int8 with operations the ALU computes becomes vta.conv2d_packed
// and that tail in VTA's layouts:
//   - the data packed to [N/b][C/bi][H][W][b][bi] (reshape, transpose, reshape; none when it
//     is the unpacked output of another packed convolution), the weight packed as a
//     constant, the output unpacked to NCHW for its other users;
//   - a per-channel int32 bias (nn.bias_add, add) added from the accumulator, packed;
//   - scalar adds, shifts, ReLU and clips as vta.alu_imm; a clip whose bounds the values
//     provably never pass (from the weights' sums and the operations before it) is dropped,
//     as is a saturating clip before a rounding add;
//   - a residual add of an int8 tensor widened (and shifted left) on the way in;
//   - the final cast to int8 as the STORE;
//   - channels that are no whole number of blocks padded to one: zero weights (and biases)
//     for the padded channels, the data padded with zeros on the way in and the padded
//     output channels sliced off on the way out (a packed consumer takes them as they are:
//     its weights for them are zero). A layer whose work padding would more than double (an
//     RGB image's 3 channels in blocks of 16) stays on the CPU.
// Anything else keeps the convolution on the CPU. Each convolution's placement is recorded
// (graph::RecordPlacement), with the reason for the CPU (padding that would more than double
// its work, an operation the ALU lacks, an immediate beyond 16 bits, no tiling that fits the
// on-chip buffers, ...) or, on VTA, the channels it padded. Each packed convolution's tiling (its
// "tiling" attribute) is the one the current tuning records give for `target`
// (graph::QueryTunedConfig; conv2d_tuning.h), else DefaultConv2DTiling with the target's
// -virtual-threads.
graph::Pass PackGraph(const Environment& env, const Target& target);

// Registers the operators, the implementation under the "vta" target key and PackGraph as the
// vta target's graph pass. Done when the library loads; a program that compiles for VTA calls
// it so that the library is linked in. Returns true.
bool RegisterGraphIntegration();

}  // namespace loom::vta
