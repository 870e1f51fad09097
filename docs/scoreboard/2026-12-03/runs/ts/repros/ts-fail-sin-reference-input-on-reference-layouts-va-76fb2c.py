"""Standalone repro of a dynamo-aot-suite problem: ts-fail-sin-reference-input-on-reference-layouts-va-76fb2c

FAIL on backend ts, 1 test(s); made from test.dynamo.test_op_sweep.OpSweepTests_ts.test_reference_layouts
  OpCheckFailure: sin (reference input 0) on reference layouts values: compiled call raised BackendCompilerFailed: backend="CompileCounterWithBackend(CompileCounterWithBackend('ts', frames=6, ops=170), frames=6, ops=170)" raised: RuntimeError:; sin (reference input 1) on reference layouts values: compiled call raised BackendCompilerFailed: backend="CompileCounterWithBackend(CompileCounterWithBacken…

Written by dynamo-aot-suite with torch 2.13.0+cpu.

    python ts-fail-sin-reference-input-on-reference-layouts-va-76fb2c.py                      # exit 1: the problem shows; 0: it does not
    python ts-fail-sin-reference-input-on-reference-layouts-va-76fb2c.py --backend aot_eager  # the same against another backend
"""

from __future__ import annotations

import argparse
import builtins
import importlib
import importlib.util
import math
import operator
import os
import re
import subprocess
import sys
import types
from typing import Any

import torch

PROBLEM = 'ts-fail-sin-reference-input-on-reference-layouts-va-76fb2c'
BACKEND = 'ts'
SEARCH_PATH = ['/work/boards/empty/ts', '/work/boards/venv-ts/lib/python3.11/site-packages/harness/_bundled']
SCENARIO = ['test.dynamo.test_op_sweep', 'OpSweepTests', 'test_reference_layouts']
ENVIRONMENT = {}
CLASS_SUFFIX = ''
COMPILE_OPTIONS = {}
TIME_LIMIT = 81.9
GRAPHS = [{'code': 'def forward(self, L_tensors_0_ : torch.Tensor, L_tensors_1_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    l_tensors_1_ = L_tensors_1_\n    atan2 = torch.atan2(l_tensors_0_, l_tensors_1_);  l_tensors_0_ = l_tensors_1_ = None\n    return (atan2,)\n', 'inputs': [{'shape': [3, 1, 3], 'stride': [0, 3, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[[-1.5177494287490845, 7.519496917724609, 1.647250771522522]], [[-1.5177494287490845, 7.519496917724609, 1.647250771522522]], [[-1.5177494287490845, 7.519496917724609, 1.647250771522522]]]}, {'shape': [3, 1, 3], 'stride': [0, 3, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[[0.6943777799606323, 4.026985168457031, -2.679877758026123]], [[0.6943777799606323, 4.026985168457031, -2.679877758026123]], [[0.6943777799606323, 4.026985168457031, -2.679877758026123]]]}]}, {'code': 'def forward(self, L_tensors_0_ : torch.Tensor, L_tensors_1_ : torch.Tensor, L_tensors_2_ : torch.Tensor, L_tensors_3_ : torch.Tensor, L_tensors_4_ : torch.Tensor, L_tensors_5_ : torch.Tensor, L_tensors_6_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    l_tensors_1_ = L_tensors_1_\n    l_tensors_2_ = L_tensors_2_\n    l_tensors_3_ = L_tensors_3_\n    l_tensors_4_ = L_tensors_4_\n    l_tensors_5_ = L_tensors_5_\n    l_tensors_6_ = L_tensors_6_\n    atan2 = torch.atan2(l_tensors_0_, l_tensors_1_);  l_tensors_0_ = l_tensors_1_ = None\n    permute = torch.permute(l_tensors_2_, (1, 0));  l_tensors_2_ = None\n    cat = torch.cat([l_tensors_3_], 1);  l_tensors_3_ = None\n    cat_1 = torch.cat((l_tensors_4_, l_tensors_5_, l_tensors_6_), dim = 1);  l_tensors_4_ = l_tensors_5_ = l_tensors_6_ = None\n    return (atan2, permute, cat, cat_1)\n', 'inputs': [{'shape': [5, 6, 2], 'stride': [1, 1, 7], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[[1.647250771522522, -7.90920352935791], [0.6943777799606323, -5.622043132781982], [4.026985168457031, -0.7386535406112671], [-2.679877758026123, -7.017433166503906], [-8.4433012008667, 1.7647079229354858], [5.194806098937988, -1.4119877815246582]], [[0.6943777799606323, -5.622043132781982], [4.026985168457031, -0.7386535406112671], [-2.679877758026123, -7.017433166503906], [-8.4433012008667, 1.7647079229354858], [5.194806098937988, -1.4119877815246582], [-3.6350176334381104, 0.41789674758911133]], [[4.026985168457031, -0.7386535406112671], [-2.679877758026123, -7.017433166503906], [-8.4433012008667, 1.7647079229354858], [5.194806098937988, -1.4119877815246582], [-3.6350176334381104, 0.41789674758911133], [-7.90920352935791, -7.970241069793701]], [[-2.679877758026123, -7.017433166503906], [-8.4433012008667, 1.7647079229354858], [5.194806098937988, -1.4119877815246582], [-3.6350176334381104, 0.41789674758911133], [-7.90920352935791, -7.970241069793701], [-5.622043132781982, 2.5014045238494873]], [[-8.4433012008667, 1.7647079229354858], [5.194806098937988, -1.4119877815246582], [-3.6350176334381104, 0.41789674758911133], [-7.90920352935791, -7.970241069793701], [-5.622043132781982, 2.5014045238494873], [-0.7386535406112671, -3.6592764854431152]]]}, {'shape': [5, 6, 2], 'stride': [12, 2, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[[6.520585060119629, -0.8406236171722412], [2.2161130905151367, 5.967489242553711], [4.067169666290283, 6.925175189971924], [6.505378246307373, 0.04140901565551758], [-6.51021671295166, -7.03925895690918], [-8.129449844360352, -0.503049373626709]], [[-2.3687596321105957, 4.121823310852051], [-0.27479124069213867, 5.719875335693359], [-2.416409492492676, 0.4781928062438965], [3.0587987899780273, -0.8941175937652588], [4.105746269226074, 1.111268162727356], [-5.935122489929199, -3.7106375694274902]], [[1.5597496032714844, -4.3718085289001465], [-5.049901962280273, 5.396003723144531], [3.573293685913086, -7.55289888381958], [8.182592391967773, 1.4653369188308716], [4.857274532318115, -2.126490592956543], [3.062401294708252, -7.669662952423096]], [[-2.377802848815918, 5.391152381896973], [8.157036781311035, 5.683965682983398], [-0.9244512319564819, -8.931135177612305], [7.292889595031738, 1.5029447078704834], [3.865936517715454, -5.604551792144775], [2.413767099380493, 0.15065324306488037]], [[-2.8413124084472656, 3.9260964393615723], [-8.908135414123535, -0.9802347421646118], [4.5730204582214355, -5.924228191375732], [6.887560844421387, -0.8910427093505859], [-0.28015995025634766, -8.83555793762207], [0.985846996307373, 7.823196887969971]]]}, {'shape': [2, 2], 'stride': [1, 2], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[-1.5177494287490845, 1.647250771522522], [7.519496917724609, 0.6943777799606323]]}, {'shape': [2, 2, 2, 2], 'stride': [8, 1, 4, 2], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[[[-1.5177494287490845, 7.519496917724609], [1.647250771522522, 0.6943777799606323]], [[4.026985168457031, -2.679877758026123], [-8.4433012008667, 5.194806098937988]]], [[[-3.6350176334381104, -7.90920352935791], [-5.622043132781982, -0.7386535406112671]], [[-7.017433166503906, 1.7647079229354858], [-1.4119877815246582, 0.41789674758911133]]]]}, {'shape': [3, 4, 2], 'stride': [8, 2, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[[-1.5177494287490845, 7.519496917724609], [1.647250771522522, 0.6943777799606323], [4.026985168457031, -2.679877758026123], [-8.4433012008667, 5.194806098937988]], [[-3.6350176334381104, -7.90920352935791], [-5.622043132781982, -0.7386535406112671], [-7.017433166503906, 1.7647079229354858], [-1.4119877815246582, 0.41789674758911133]], [[-7.970241069793701, 2.5014045238494873], [-3.6592764854431152, 2.934680938720703], [-3.3235349655151367, 4.221205711364746], [1.8184701204299927, -8.887520790100098]]]}, {'shape': [3, 2, 2], 'stride': [8, 4, 2], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': True, 'values': [[[-1.0254116788681915, 7.466812509418826], [6.313466907473525, -4.808976744184449]], [[-1.09910813327223, 2.692381402337167], [-5.3405554465991205, 0.9996350275186634]], [[-2.2191726357166006, 3.488362171219847], [-6.531852537414457, 4.825610160366747]]]}, {'shape': [3, 3, 2], 'stride': [2, 6, 1], 'dtype': 'torch.float16', 'device': 'cpu', 'requires_grad': True, 'values': [[[5.92578125, 4.71484375], [3.59375, -1.1328125], [-0.54931640625, 0.7470703125]], [[0.2138671875, 7.484375], [-7.0390625, -2.40625], [-1.462890625, -2.35546875]], [[-0.99560546875, 8.453125], [-3.962890625, 3.361328125], [-3.8046875, 1.0341796875]]]}]}, {'code': 'def forward(self, L_tensors_0_ : torch.Tensor, L_tensors_1_ : torch.Tensor, L_tensors_2_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    l_tensors_1_ = L_tensors_1_\n    l_tensors_2_ = L_tensors_2_\n    atan2 = torch.atan2(l_tensors_0_, l_tensors_1_);  l_tensors_0_ = l_tensors_1_ = None\n    permute = torch.permute(l_tensors_2_, (1, 0));  l_tensors_2_ = None\n    return (atan2, permute)\n', 'inputs': [{'shape': [5, 6, 2], 'stride': [1, 1, 7], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[[1.647250771522522, -7.90920352935791], [0.6943777799606323, -5.622043132781982], [4.026985168457031, -0.7386535406112671], [-2.679877758026123, -7.017433166503906], [-8.4433012008667, 1.7647079229354858], [5.194806098937988, -1.4119877815246582]], [[0.6943777799606323, -5.622043132781982], [4.026985168457031, -0.7386535406112671], [-2.679877758026123, -7.017433166503906], [-8.4433012008667, 1.7647079229354858], [5.194806098937988, -1.4119877815246582], [-3.6350176334381104, 0.41789674758911133]], [[4.026985168457031, -0.7386535406112671], [-2.679877758026123, -7.017433166503906], [-8.4433012008667, 1.7647079229354858], [5.194806098937988, -1.4119877815246582], [-3.6350176334381104, 0.41789674758911133], [-7.90920352935791, -7.970241069793701]], [[-2.679877758026123, -7.017433166503906], [-8.4433012008667, 1.7647079229354858], [5.194806098937988, -1.4119877815246582], [-3.6350176334381104, 0.41789674758911133], [-7.90920352935791, -7.970241069793701], [-5.622043132781982, 2.5014045238494873]], [[-8.4433012008667, 1.7647079229354858], [5.194806098937988, -1.4119877815246582], [-3.6350176334381104, 0.41789674758911133], [-7.90920352935791, -7.970241069793701], [-5.622043132781982, 2.5014045238494873], [-0.7386535406112671, -3.6592764854431152]]]}, {'shape': [5, 6, 2], 'stride': [12, 2, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[[6.520585060119629, -0.8406236171722412], [2.2161130905151367, 5.967489242553711], [4.067169666290283, 6.925175189971924], [6.505378246307373, 0.04140901565551758], [-6.51021671295166, -7.03925895690918], [-8.129449844360352, -0.503049373626709]], [[-2.3687596321105957, 4.121823310852051], [-0.27479124069213867, 5.719875335693359], [-2.416409492492676, 0.4781928062438965], [3.0587987899780273, -0.8941175937652588], [4.105746269226074, 1.111268162727356], [-5.935122489929199, -3.7106375694274902]], [[1.5597496032714844, -4.3718085289001465], [-5.049901962280273, 5.396003723144531], [3.573293685913086, -7.55289888381958], [8.182592391967773, 1.4653369188308716], [4.857274532318115, -2.126490592956543], [3.062401294708252, -7.669662952423096]], [[-2.377802848815918, 5.391152381896973], [8.157036781311035, 5.683965682983398], [-0.9244512319564819, -8.931135177612305], [7.292889595031738, 1.5029447078704834], [3.865936517715454, -5.604551792144775], [2.413767099380493, 0.15065324306488037]], [[-2.8413124084472656, 3.9260964393615723], [-8.908135414123535, -0.9802347421646118], [4.5730204582214355, -5.924228191375732], [6.887560844421387, -0.8910427093505859], [-0.28015995025634766, -8.83555793762207], [0.985846996307373, 7.823196887969971]]]}, {'shape': [2, 2], 'stride': [1, 2], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[-1.5177494287490845, 1.647250771522522], [7.519496917724609, 0.6943777799606323]]}]}, {'code': 'def forward(self, L_tensors_0_ : torch.Tensor, L_tensors_1_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    l_tensors_1_ = L_tensors_1_\n    atan2 = torch.atan2(l_tensors_0_, l_tensors_1_);  l_tensors_0_ = l_tensors_1_ = None\n    return (atan2,)\n', 'inputs': [{'shape': [5, 6, 2], 'stride': [1, 1, 7], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[[1.647250771522522, -7.90920352935791], [0.6943777799606323, -5.622043132781982], [4.026985168457031, -0.7386535406112671], [-2.679877758026123, -7.017433166503906], [-8.4433012008667, 1.7647079229354858], [5.194806098937988, -1.4119877815246582]], [[0.6943777799606323, -5.622043132781982], [4.026985168457031, -0.7386535406112671], [-2.679877758026123, -7.017433166503906], [-8.4433012008667, 1.7647079229354858], [5.194806098937988, -1.4119877815246582], [-3.6350176334381104, 0.41789674758911133]], [[4.026985168457031, -0.7386535406112671], [-2.679877758026123, -7.017433166503906], [-8.4433012008667, 1.7647079229354858], [5.194806098937988, -1.4119877815246582], [-3.6350176334381104, 0.41789674758911133], [-7.90920352935791, -7.970241069793701]], [[-2.679877758026123, -7.017433166503906], [-8.4433012008667, 1.7647079229354858], [5.194806098937988, -1.4119877815246582], [-3.6350176334381104, 0.41789674758911133], [-7.90920352935791, -7.970241069793701], [-5.622043132781982, 2.5014045238494873]], [[-8.4433012008667, 1.7647079229354858], [5.194806098937988, -1.4119877815246582], [-3.6350176334381104, 0.41789674758911133], [-7.90920352935791, -7.970241069793701], [-5.622043132781982, 2.5014045238494873], [-0.7386535406112671, -3.6592764854431152]]]}, {'shape': [5, 6, 2], 'stride': [12, 2, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[[6.520585060119629, -0.8406236171722412], [2.2161130905151367, 5.967489242553711], [4.067169666290283, 6.925175189971924], [6.505378246307373, 0.04140901565551758], [-6.51021671295166, -7.03925895690918], [-8.129449844360352, -0.503049373626709]], [[-2.3687596321105957, 4.121823310852051], [-0.27479124069213867, 5.719875335693359], [-2.416409492492676, 0.4781928062438965], [3.0587987899780273, -0.8941175937652588], [4.105746269226074, 1.111268162727356], [-5.935122489929199, -3.7106375694274902]], [[1.5597496032714844, -4.3718085289001465], [-5.049901962280273, 5.396003723144531], [3.573293685913086, -7.55289888381958], [8.182592391967773, 1.4653369188308716], [4.857274532318115, -2.126490592956543], [3.062401294708252, -7.669662952423096]], [[-2.377802848815918, 5.391152381896973], [8.157036781311035, 5.683965682983398], [-0.9244512319564819, -8.931135177612305], [7.292889595031738, 1.5029447078704834], [3.865936517715454, -5.604551792144775], [2.413767099380493, 0.15065324306488037]], [[-2.8413124084472656, 3.9260964393615723], [-8.908135414123535, -0.9802347421646118], [4.5730204582214355, -5.924228191375732], [6.887560844421387, -0.8910427093505859], [-0.28015995025634766, -8.83555793762207], [0.985846996307373, 7.823196887969971]]]}]}, {'code': 'def forward(self, L_tensors_0_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    permute = torch.permute(l_tensors_0_, (1, 0));  l_tensors_0_ = None\n    return (permute,)\n', 'inputs': [{'shape': [2, 2], 'stride': [1, 2], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[-1.5177494287490845, 1.647250771522522], [7.519496917724609, 0.6943777799606323]]}]}, {'code': 'def forward(self, L_tensors_0_ : torch.Tensor, L_tensors_1_ : torch.Tensor, L_tensors_2_ : torch.Tensor, L_tensors_3_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    l_tensors_1_ = L_tensors_1_\n    l_tensors_2_ = L_tensors_2_\n    l_tensors_3_ = L_tensors_3_\n    cat = torch.cat([l_tensors_0_], 1);  l_tensors_0_ = None\n    cat_1 = torch.cat((l_tensors_1_, l_tensors_2_, l_tensors_3_), dim = 1);  l_tensors_1_ = l_tensors_2_ = l_tensors_3_ = None\n    return (cat, cat_1)\n', 'inputs': [{'shape': [2, 2, 2, 2], 'stride': [8, 1, 4, 2], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[[[-1.5177494287490845, 7.519496917724609], [1.647250771522522, 0.6943777799606323]], [[4.026985168457031, -2.679877758026123], [-8.4433012008667, 5.194806098937988]]], [[[-3.6350176334381104, -7.90920352935791], [-5.622043132781982, -0.7386535406112671]], [[-7.017433166503906, 1.7647079229354858], [-1.4119877815246582, 0.41789674758911133]]]]}, {'shape': [3, 4, 2], 'stride': [8, 2, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[[-1.5177494287490845, 7.519496917724609], [1.647250771522522, 0.6943777799606323], [4.026985168457031, -2.679877758026123], [-8.4433012008667, 5.194806098937988]], [[-3.6350176334381104, -7.90920352935791], [-5.622043132781982, -0.7386535406112671], [-7.017433166503906, 1.7647079229354858], [-1.4119877815246582, 0.41789674758911133]], [[-7.970241069793701, 2.5014045238494873], [-3.6592764854431152, 2.934680938720703], [-3.3235349655151367, 4.221205711364746], [1.8184701204299927, -8.887520790100098]]]}, {'shape': [3, 2, 2], 'stride': [8, 4, 2], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': True, 'values': [[[-1.0254116788681915, 7.466812509418826], [6.313466907473525, -4.808976744184449]], [[-1.09910813327223, 2.692381402337167], [-5.3405554465991205, 0.9996350275186634]], [[-2.2191726357166006, 3.488362171219847], [-6.531852537414457, 4.825610160366747]]]}, {'shape': [3, 3, 2], 'stride': [2, 6, 1], 'dtype': 'torch.float16', 'device': 'cpu', 'requires_grad': True, 'values': [[[5.92578125, 4.71484375], [3.59375, -1.1328125], [-0.54931640625, 0.7470703125]], [[0.2138671875, 7.484375], [-7.0390625, -2.40625], [-1.462890625, -2.35546875]], [[-0.99560546875, 8.453125], [-3.962890625, 3.361328125], [-3.8046875, 1.0341796875]]]}]}, {'code': 'def forward(self, L_tensors_0_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    cat = torch.cat([l_tensors_0_], 1);  l_tensors_0_ = None\n    return (cat,)\n', 'inputs': [{'shape': [2, 2, 2, 2], 'stride': [8, 1, 4, 2], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[[[-1.5177494287490845, 7.519496917724609], [1.647250771522522, 0.6943777799606323]], [[4.026985168457031, -2.679877758026123], [-8.4433012008667, 5.194806098937988]]], [[[-3.6350176334381104, -7.90920352935791], [-5.622043132781982, -0.7386535406112671]], [[-7.017433166503906, 1.7647079229354858], [-1.4119877815246582, 0.41789674758911133]]]]}]}, {'code': 'def forward(self, L_tensors_0_ : torch.Tensor, L_tensors_1_ : torch.Tensor, L_tensors_2_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    l_tensors_1_ = L_tensors_1_\n    l_tensors_2_ = L_tensors_2_\n    cat = torch.cat((l_tensors_0_, l_tensors_1_, l_tensors_2_), dim = 1);  l_tensors_0_ = l_tensors_1_ = l_tensors_2_ = None\n    return (cat,)\n', 'inputs': [{'shape': [3, 4, 2], 'stride': [8, 2, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[[-1.5177494287490845, 7.519496917724609], [1.647250771522522, 0.6943777799606323], [4.026985168457031, -2.679877758026123], [-8.4433012008667, 5.194806098937988]], [[-3.6350176334381104, -7.90920352935791], [-5.622043132781982, -0.7386535406112671], [-7.017433166503906, 1.7647079229354858], [-1.4119877815246582, 0.41789674758911133]], [[-7.970241069793701, 2.5014045238494873], [-3.6592764854431152, 2.934680938720703], [-3.3235349655151367, 4.221205711364746], [1.8184701204299927, -8.887520790100098]]]}, {'shape': [3, 2, 2], 'stride': [8, 4, 2], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': True, 'values': [[[-1.0254116788681915, 7.466812509418826], [6.313466907473525, -4.808976744184449]], [[-1.09910813327223, 2.692381402337167], [-5.3405554465991205, 0.9996350275186634]], [[-2.2191726357166006, 3.488362171219847], [-6.531852537414457, 4.825610160366747]]]}, {'shape': [3, 3, 2], 'stride': [2, 6, 1], 'dtype': 'torch.float16', 'device': 'cpu', 'requires_grad': True, 'values': [[[5.92578125, 4.71484375], [3.59375, -1.1328125], [-0.54931640625, 0.7470703125]], [[0.2138671875, 7.484375], [-7.0390625, -2.40625], [-1.462890625, -2.35546875]], [[-0.99560546875, 8.453125], [-3.962890625, 3.361328125], [-3.8046875, 1.0341796875]]]}]}]


GLOBALS = {"torch": torch, "operator": operator, "math": math, "builtins": builtins, "inf": math.inf,
           "nan": math.nan}


def make_input(spec: Any, generator: torch.Generator) -> Any:
    """The input a spec describes (the repro file carries a copy of this function)."""
    if not isinstance(spec, dict):
        return spec
    dtype = getattr(torch, spec["dtype"].removeprefix("torch."))
    broadcast = [dim for dim, (size, step) in enumerate(zip(spec["shape"], spec["stride"])) if size > 1 and not step]
    if broadcast:  # an expanded tensor: make one slice, then expand it as the original was
        shape = [1 if dim in broadcast else size for dim, size in enumerate(spec["shape"])]
        base = dict(spec, shape=shape, requires_grad=False)
        if "values" in spec:
            values = torch.tensor(spec["values"], dtype=dtype).reshape(spec["shape"])
            base["values"] = values[tuple(slice(0, 1) if dim in broadcast else slice(None)
                                          for dim in range(len(shape)))].tolist()
        return make_input(base, generator).expand(spec["shape"]).requires_grad_(spec["requires_grad"])
    if "values" in spec:
        dense = torch.tensor(spec["values"], dtype=dtype).reshape(spec["shape"])
    else:
        low, high = spec.get("range", [0, 1])
        if dtype.is_floating_point or dtype.is_complex:
            dense = torch.rand(spec["shape"], generator=generator, dtype=torch.float64) * (high - low) + low
        else:
            dense = torch.randint(int(low), int(high) + 1, spec["shape"], generator=generator)
        dense = dense.to(dtype)
    storage = 1 + sum((size - 1) * step for size, step in zip(spec["shape"], spec["stride"]))
    flat = torch.zeros(storage if dense.numel() else 0, dtype=dtype, device=spec["device"])
    tensor = flat.as_strided(spec["shape"], spec["stride"])
    tensor.copy_(dense.to(spec["device"]))
    return tensor.requires_grad_(spec["requires_grad"])


def build(code: str) -> types.FunctionType:
    namespace = dict(GLOBALS)
    exec(compile(code, "<graph>", "exec"), namespace)
    return namespace["forward"]


def resolve(spec):
    """A backend spec as run_tests.py takes it: a registered name, module:attr or file.py:attr."""
    if ":" not in spec:
        return spec
    where, attr = spec.rsplit(":", 1)
    if where.endswith(".py"):
        path = where if os.path.isabs(where) else os.path.join(SEARCH_PATH[0], where)
        loaded = importlib.util.spec_from_file_location("repro_backend", path)
        module = importlib.util.module_from_spec(loaded)
        loaded.loader.exec_module(module)
    else:
        sys.path[:0] = [entry for entry in SEARCH_PATH if entry not in sys.path]
        module = importlib.import_module(where)
    for part in attr.split("."):
        module = getattr(module, part)
    return module


def differences(name, expected, actual):
    """What tells ``actual`` (compiled) apart from ``expected`` (eager)."""
    if isinstance(expected, (list, tuple)) and isinstance(actual, (list, tuple)):
        if len(expected) != len(actual):
            return [f"{name}: {len(actual)} values, eager gives {len(expected)}"]
        return [line for index, pair in enumerate(zip(expected, actual))
                for line in differences(f"{name}[{index}]", *pair)]
    if not isinstance(expected, torch.Tensor) or not isinstance(actual, torch.Tensor):
        return [] if expected == actual else [f"{name}: {actual!r}, eager gives {expected!r}"]
    for attribute in ("shape", "dtype", "requires_grad"):
        if getattr(expected, attribute) != getattr(actual, attribute):
            return [f"{name}: {attribute} {getattr(actual, attribute)}, eager gives {getattr(expected, attribute)}"]
    try:
        torch.testing.assert_close(actual.detach(), expected.detach(), equal_nan=True)
    except AssertionError as error:
        detail = " ".join(line.strip() for line in str(error).splitlines()[1:3])
        return [f"{name}: values differ from eager ({detail}){first_difference(expected, actual)}"]
    return []


def first_difference(expected, actual):
    """Where the compiled value first differs from eager's, and both values there."""
    try:
        want, got = expected.detach().cpu(), actual.detach().cpu()
        common = torch.promote_types(want.dtype, got.dtype)
        apart = (~torch.isclose(got.to(common), want.to(common), equal_nan=True)).nonzero()
        if not len(apart):
            return ""
        index = tuple(apart[0].tolist())
        return f"; first at index {index}: compiled {got[index].item()!r}, eager {want[index].item()!r}"
    except Exception:  # a dtype isclose does not take: the summary above says enough
        return ""


def described(error):
    """An error as its type and first line, then what raised it (Dynamo wraps a backend's own)."""
    parts = []
    while error is not None and len(parts) < 3:
        lines = [line for line in str(error).strip().splitlines() if line.strip()]
        parts.append(f"{type(error).__name__}: {lines[0] if lines else ''}")
        error = error.__cause__ or getattr(error, "inner_exception", None)
    return ", from ".join(parts)


def replay(graph, backend):
    forward = build(graph["code"])

    def program(*args):
        return forward(None, *args)

    eager_inputs = [make_input(spec, torch.Generator().manual_seed(0)) for spec in graph["inputs"]]
    compiled_inputs = [make_input(spec, torch.Generator().manual_seed(0)) for spec in graph["inputs"]]
    torch.manual_seed(0)  # random ops draw the same numbers in both
    expected = program(*eager_inputs)
    torch._dynamo.reset()
    try:
        torch.manual_seed(0)
        actual = torch.compile(program, backend=backend, fullgraph=True, **COMPILE_OPTIONS)(*compiled_inputs)
    except Exception as error:
        return [f"compiled call raised {described(error)}"]
    found = differences("output", expected, actual)
    found += differences("inputs after the call", eager_inputs, compiled_inputs)
    leaves = [index for index, value in enumerate(eager_inputs)
              if isinstance(value, torch.Tensor) and value.requires_grad and value.is_leaf]
    outputs = [(want, got) for want, got in zip(*(v if isinstance(v, (list, tuple)) else [v] for v in (expected, actual)))
               if isinstance(want, torch.Tensor) and want.requires_grad and want.dtype.is_floating_point]
    if leaves and outputs and not found:
        try:
            sum(want.sum() for want, _ in outputs).backward()
            sum(got.sum() for _, got in outputs).backward()
        except Exception as error:
            return [f"backward raised {described(error)}"]
        found += differences("gradients", [eager_inputs[i].grad for i in leaves],
                             [compiled_inputs[i].grad for i in leaves])
    return found


def run_scenario(spec):
    """Run the suite's own scenario on ``spec`` in a subprocess; 0 if it passes."""
    module, family, method = SCENARIO
    env = dict(os.environ, DYNAMO_SUITE_BACKENDS=spec, **ENVIRONMENT)
    env["PYTHONPATH"] = os.pathsep.join(SEARCH_PATH + [env.get("PYTHONPATH", "")])
    name = subprocess.run([sys.executable, "-c", "import sys; from harness.axes.backends import resolve_backend; "
                           "print(resolve_backend(sys.argv[1]).name)", spec],
                          env=env, cwd=SEARCH_PATH[1], capture_output=True, text=True)
    if name.returncode != 0:
        print(name.stderr.strip().splitlines()[-1:])
        return 1
    test_class = f"{family}_{name.stdout.strip()}{CLASS_SUFFIX}"
    # Under pytest, as the run did: some behaviour (a backend's, a plugin's) depends on it.
    node = f"{module.replace('.', '/')}.py::{test_class}::{method}"
    has_pytest = subprocess.run([sys.executable, "-c", "import pytest"], capture_output=True).returncode == 0
    command = (["-m", "pytest", "-q", "-p", "no:cacheprovider", node] if has_pytest
               else ["-m", "unittest", f"{module}.{test_class}.{method}"])
    print(f"running the scenario: python {' '.join(command)}", flush=True)
    try:
        done = subprocess.run([sys.executable, *command], env=env, cwd=SEARCH_PATH[1], timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        print(f"still running after {TIME_LIMIT} s")
        return 1
    return 0 if done.returncode == 0 else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default=BACKEND, help=f"backend spec (default: {BACKEND})")
    spec = parser.parse_args().backend
    if GRAPHS:
        backend = resolve(spec)
        found = [f"graph {index}: {line}" for index, graph in enumerate(GRAPHS) for line in replay(graph, backend)]
        if found:
            print(f"{len(found)} difference(s) from eager on {spec}:")
            print("\n".join(f"  {line}" for line in found))
            return 1
        print(f"the {len(GRAPHS)} graph(s) agree with eager on {spec}; running the scenario itself", flush=True)
    code = run_scenario(spec)
    print(f"the problem shows on {spec}" if code else f"the problem does not show on {spec}")
    return code


if __name__ == "__main__":
    sys.exit(main())
