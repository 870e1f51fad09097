"""Standalone repro of a dynamo-aot-suite problem: ts-fail-add-sample-add-alpha-other-on-reference-opt-c6728f

FAIL on backend ts, 1 test(s); made from test.dynamo.test_op_sweep.OpSweepTests_ts.test_reference_options
  OpCheckFailure: add (sample 9: add: alpha=other) on reference options values: compiled call raised BackendCompilerFailed: backend="CompileCounterWithBackend(CompileCounterWithBackend('ts', frames=7, ops=319), frames=7, ops=319)" raised: RuntimeError:; sub (sample 9: sub: alpha=other) on reference options values: compiled call raised BackendCompilerFailed: backend="CompileCounterWithBackend(Compil…

Written by dynamo-aot-suite with torch 2.13.0+cpu.

    python ts-fail-add-sample-add-alpha-other-on-reference-opt-c6728f.py                      # exit 1: the problem shows; 0: it does not
    python ts-fail-add-sample-add-alpha-other-on-reference-opt-c6728f.py --backend aot_eager  # the same against another backend
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

PROBLEM = 'ts-fail-add-sample-add-alpha-other-on-reference-opt-c6728f'
BACKEND = 'ts'
SEARCH_PATH = ['/work/boards/empty/ts', '/work/boards/venv-ts/lib/python3.11/site-packages/harness/_bundled']
SCENARIO = ['test.dynamo.test_op_sweep', 'OpSweepTests', 'test_reference_options']
ENVIRONMENT = {}
CLASS_SUFFIX = ''
COMPILE_OPTIONS = {}
TIME_LIMIT = 122.9
GRAPHS = [{'code': "def forward(self, L_tensors_0_ : torch.Tensor, L_tensors_1_ : torch.Tensor, L_tensors_2_ : torch.Tensor, L_tensors_3_ : torch.Tensor, L_tensors_4_ : torch.Tensor, L_tensors_5_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    l_tensors_1_ = L_tensors_1_\n    l_tensors_2_ = L_tensors_2_\n    l_tensors_3_ = L_tensors_3_\n    l_tensors_4_ = L_tensors_4_\n    l_tensors_5_ = L_tensors_5_\n    scatter_reduce = torch.scatter_reduce(l_tensors_0_, 0, l_tensors_1_, l_tensors_2_, 'amin', include_self = True);  l_tensors_0_ = l_tensors_1_ = l_tensors_2_ = None\n    scatter_reduce_1 = torch.scatter_reduce(l_tensors_3_, 0, l_tensors_4_, l_tensors_5_, 'amax', include_self = False);  l_tensors_3_ = l_tensors_4_ = l_tensors_5_ = None\n    return (scatter_reduce, scatter_reduce_1)\n", 'inputs': [{'shape': [10, 5], 'stride': [5, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[-1.5177494287490845, 7.519496917724609, 1.647250771522522, 0.6943777799606323, 4.026985168457031], [-2.679877758026123, -8.4433012008667, 5.194806098937988, -3.6350176334381104, -7.90920352935791], [-5.622043132781982, -0.7386535406112671, -7.017433166503906, 1.7647079229354858, -1.4119877815246582], [0.41789674758911133, -7.970241069793701, 2.5014045238494873, -3.6592764854431152, 2.934680938720703], [-3.3235349655151367, 4.221205711364746, 1.8184701204299927, -8.887520790100098, -5.207923889160156], [-1.8530384302139282, -8.003177642822266, -2.2094171047210693, 8.541403770446777, -7.353768348693848], [-6.941649436950684, 6.664693832397461, -0.7194628715515137, -3.03456974029541, 1.9141831398010254], [-2.502869129180908, -3.6631174087524414, -5.597036361694336, -6.226122856140137, 2.5629043579101562], [7.077117919921875, -7.523540496826172, 0.9876108169555664, -8.896479606628418, 6.263800144195557], [-2.77400279045105, 1.4615474939346313, -4.075406074523926, 0.8560237884521484, 1.8574029207229614]]}, {'shape': [5, 5], 'stride': [5, 1], 'dtype': 'torch.int64', 'device': 'cpu', 'requires_grad': False, 'values': [[9, 6, 9, 2, 3], [2, 4, 5, 8, 6], [7, 7, 3, 9, 0], [8, 2, 6, 3, 7], [6, 3, 1, 5, 8]]}, {'shape': [5, 5], 'stride': [5, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[0.457430362701416, -4.202237129211426, -4.1170783042907715, -6.701673984527588, 3.499953269958496], [-8.108909606933594, -5.9319047927856445, 7.436293601989746, 0.8476027250289917, 8.177384376525879], [4.010373592376709, 5.357206344604492, 8.311044692993164, -0.7509005069732666, 6.377486228942871], [7.471103191375732, -8.691481590270996, 0.18878674507141113, -8.821762084960938, -3.9316110610961914], [-2.771799087524414, -3.247438430786133, 5.924411773681641, 4.713410377502441, 0.2138911485671997]]}, {'shape': [10, 5], 'stride': [5, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[3.5597548484802246, 2.8895716667175293, 3.6953468322753906, -8.6268310546875, 2.63102388381958], [1.020628809928894, -5.956019878387451, 7.056607723236084, -5.316343307495117, 4.743740081787109], [-2.566720485687256, -2.619032382965088, 8.31690502166748, 5.504040718078613, -5.078505516052246], [-7.706083297729492, 6.931427955627441, -1.3616749048233032, -5.857896327972412, 4.457375526428223], [3.737175464630127, 2.2913553714752197, 3.3965444564819336, 1.7684115171432495, 5.460375785827637], [8.035749435424805, -7.681240558624268, -4.451546669006348, 4.248671531677246, 1.7626909017562866], [-7.281381130218506, -0.29332637786865234, 8.294196128845215, -1.7343581914901733, 8.800514221191406], [-6.627384185791016, 7.16364049911499, 2.140859842300415, 3.608198642730713, -1.98722505569458], [0.3033353090286255, 7.257549285888672, 0.06175410747528076, 5.406529903411865, -0.8424603939056396], [7.62485933303833, -3.0087153911590576, 0.8380197286605835, 8.34128475189209, 8.750229835510254]]}, {'shape': [5, 5], 'stride': [5, 1], 'dtype': 'torch.int64', 'device': 'cpu', 'requires_grad': False, 'values': [[9, 6, 9, 2, 3], [2, 4, 5, 8, 6], [7, 7, 3, 9, 0], [8, 2, 6, 3, 7], [6, 3, 1, 5, 8]]}, {'shape': [5, 5], 'stride': [5, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[4.921064853668213, -7.30094051361084, 3.188554286956787, -5.12338399887085, -5.67298698425293], [8.375360488891602, 1.1849108934402466, 4.085109710693359, -7.950504302978516, -2.704972267150879], [-6.778707027435303, 2.101928234100342, -5.845468044281006, 1.0711337327957153, -8.039251327514648], [8.559473991394043, -0.5372732877731323, 3.4027867317199707, 0.05347251892089844, -5.956711769104004], [-8.00368881225586, 1.975415825843811, -2.7143750190734863, -4.686753749847412, -3.9398269653320312]]}]}, {'code': "def forward(self, L_tensors_0_ : torch.Tensor, L_tensors_1_ : torch.Tensor, L_tensors_2_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    l_tensors_1_ = L_tensors_1_\n    l_tensors_2_ = L_tensors_2_\n    scatter_reduce = torch.scatter_reduce(l_tensors_0_, 0, l_tensors_1_, l_tensors_2_, 'amin', include_self = True);  l_tensors_0_ = l_tensors_1_ = l_tensors_2_ = None\n    return (scatter_reduce,)\n", 'inputs': [{'shape': [10, 5], 'stride': [5, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[-1.5177494287490845, 7.519496917724609, 1.647250771522522, 0.6943777799606323, 4.026985168457031], [-2.679877758026123, -8.4433012008667, 5.194806098937988, -3.6350176334381104, -7.90920352935791], [-5.622043132781982, -0.7386535406112671, -7.017433166503906, 1.7647079229354858, -1.4119877815246582], [0.41789674758911133, -7.970241069793701, 2.5014045238494873, -3.6592764854431152, 2.934680938720703], [-3.3235349655151367, 4.221205711364746, 1.8184701204299927, -8.887520790100098, -5.207923889160156], [-1.8530384302139282, -8.003177642822266, -2.2094171047210693, 8.541403770446777, -7.353768348693848], [-6.941649436950684, 6.664693832397461, -0.7194628715515137, -3.03456974029541, 1.9141831398010254], [-2.502869129180908, -3.6631174087524414, -5.597036361694336, -6.226122856140137, 2.5629043579101562], [7.077117919921875, -7.523540496826172, 0.9876108169555664, -8.896479606628418, 6.263800144195557], [-2.77400279045105, 1.4615474939346313, -4.075406074523926, 0.8560237884521484, 1.8574029207229614]]}, {'shape': [5, 5], 'stride': [5, 1], 'dtype': 'torch.int64', 'device': 'cpu', 'requires_grad': False, 'values': [[9, 6, 9, 2, 3], [2, 4, 5, 8, 6], [7, 7, 3, 9, 0], [8, 2, 6, 3, 7], [6, 3, 1, 5, 8]]}, {'shape': [5, 5], 'stride': [5, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[0.457430362701416, -4.202237129211426, -4.1170783042907715, -6.701673984527588, 3.499953269958496], [-8.108909606933594, -5.9319047927856445, 7.436293601989746, 0.8476027250289917, 8.177384376525879], [4.010373592376709, 5.357206344604492, 8.311044692993164, -0.7509005069732666, 6.377486228942871], [7.471103191375732, -8.691481590270996, 0.18878674507141113, -8.821762084960938, -3.9316110610961914], [-2.771799087524414, -3.247438430786133, 5.924411773681641, 4.713410377502441, 0.2138911485671997]]}]}, {'code': "def forward(self, L_tensors_0_ : torch.Tensor, L_tensors_1_ : torch.Tensor, L_tensors_2_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    l_tensors_1_ = L_tensors_1_\n    l_tensors_2_ = L_tensors_2_\n    scatter_reduce = torch.scatter_reduce(l_tensors_0_, 0, l_tensors_1_, l_tensors_2_, 'amax', include_self = False);  l_tensors_0_ = l_tensors_1_ = l_tensors_2_ = None\n    return (scatter_reduce,)\n", 'inputs': [{'shape': [10, 5], 'stride': [5, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[3.5597548484802246, 2.8895716667175293, 3.6953468322753906, -8.6268310546875, 2.63102388381958], [1.020628809928894, -5.956019878387451, 7.056607723236084, -5.316343307495117, 4.743740081787109], [-2.566720485687256, -2.619032382965088, 8.31690502166748, 5.504040718078613, -5.078505516052246], [-7.706083297729492, 6.931427955627441, -1.3616749048233032, -5.857896327972412, 4.457375526428223], [3.737175464630127, 2.2913553714752197, 3.3965444564819336, 1.7684115171432495, 5.460375785827637], [8.035749435424805, -7.681240558624268, -4.451546669006348, 4.248671531677246, 1.7626909017562866], [-7.281381130218506, -0.29332637786865234, 8.294196128845215, -1.7343581914901733, 8.800514221191406], [-6.627384185791016, 7.16364049911499, 2.140859842300415, 3.608198642730713, -1.98722505569458], [0.3033353090286255, 7.257549285888672, 0.06175410747528076, 5.406529903411865, -0.8424603939056396], [7.62485933303833, -3.0087153911590576, 0.8380197286605835, 8.34128475189209, 8.750229835510254]]}, {'shape': [5, 5], 'stride': [5, 1], 'dtype': 'torch.int64', 'device': 'cpu', 'requires_grad': False, 'values': [[9, 6, 9, 2, 3], [2, 4, 5, 8, 6], [7, 7, 3, 9, 0], [8, 2, 6, 3, 7], [6, 3, 1, 5, 8]]}, {'shape': [5, 5], 'stride': [5, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[4.921064853668213, -7.30094051361084, 3.188554286956787, -5.12338399887085, -5.67298698425293], [8.375360488891602, 1.1849108934402466, 4.085109710693359, -7.950504302978516, -2.704972267150879], [-6.778707027435303, 2.101928234100342, -5.845468044281006, 1.0711337327957153, -8.039251327514648], [8.559473991394043, -0.5372732877731323, 3.4027867317199707, 0.05347251892089844, -5.956711769104004], [-8.00368881225586, 1.975415825843811, -2.7143750190734863, -4.686753749847412, -3.9398269653320312]]}]}, {'code': "def forward(self, L_tensors_0_ : torch.Tensor, L_tensors_1_ : torch.Tensor, L_tensors_2_ : torch.Tensor, L_tensors_3_ : torch.Tensor, L_tensors_4_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    l_tensors_1_ = L_tensors_1_\n    l_tensors_2_ = L_tensors_2_\n    l_tensors_3_ = L_tensors_3_\n    l_tensors_4_ = L_tensors_4_\n    scatter_reduce = torch.scatter_reduce(l_tensors_0_, 0, l_tensors_1_, l_tensors_2_, 'amax', include_self = True);  l_tensors_0_ = l_tensors_1_ = l_tensors_2_ = None\n    linalg_vector_norm = torch._C._linalg.linalg_vector_norm(l_tensors_3_, ord = 1);  l_tensors_3_ = None\n    linalg_vector_norm_1 = torch._C._linalg.linalg_vector_norm(l_tensors_4_, ord = 0);  l_tensors_4_ = None\n    return (scatter_reduce, linalg_vector_norm, linalg_vector_norm_1)\n", 'inputs': [{'shape': [10, 5], 'stride': [5, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[-1.5177494287490845, 7.519496917724609, 1.647250771522522, 0.6943777799606323, 4.026985168457031], [-2.679877758026123, -8.4433012008667, 5.194806098937988, -3.6350176334381104, -7.90920352935791], [-5.622043132781982, -0.7386535406112671, -7.017433166503906, 1.7647079229354858, -1.4119877815246582], [0.41789674758911133, -7.970241069793701, 2.5014045238494873, -3.6592764854431152, 2.934680938720703], [-3.3235349655151367, 4.221205711364746, 1.8184701204299927, -8.887520790100098, -5.207923889160156], [-1.8530384302139282, -8.003177642822266, -2.2094171047210693, 8.541403770446777, -7.353768348693848], [-6.941649436950684, 6.664693832397461, -0.7194628715515137, -3.03456974029541, 1.9141831398010254], [-2.502869129180908, -3.6631174087524414, -5.597036361694336, -6.226122856140137, 2.5629043579101562], [7.077117919921875, -7.523540496826172, 0.9876108169555664, -8.896479606628418, 6.263800144195557], [-2.77400279045105, 1.4615474939346313, -4.075406074523926, 0.8560237884521484, 1.8574029207229614]]}, {'shape': [5, 5], 'stride': [5, 1], 'dtype': 'torch.int64', 'device': 'cpu', 'requires_grad': False, 'values': [[9, 6, 9, 2, 3], [2, 4, 5, 8, 6], [7, 7, 3, 9, 0], [8, 2, 6, 3, 7], [6, 3, 1, 5, 8]]}, {'shape': [5, 5], 'stride': [5, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[0.457430362701416, -4.202237129211426, -4.1170783042907715, -6.701673984527588, 3.499953269958496], [-8.108909606933594, -5.9319047927856445, 7.436293601989746, 0.8476027250289917, 8.177384376525879], [4.010373592376709, 5.357206344604492, 8.311044692993164, -0.7509005069732666, 6.377486228942871], [7.471103191375732, -8.691481590270996, 0.18878674507141113, -8.821762084960938, -3.9316110610961914], [-2.771799087524414, -3.247438430786133, 5.924411773681641, 4.713410377502441, 0.2138911485671997]]}, {'shape': [], 'stride': [], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': -1.5177494287490845}, {'shape': [], 'stride': [], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': -1.5177494287490845}]}, {'code': "def forward(self, L_tensors_0_ : torch.Tensor, L_tensors_1_ : torch.Tensor, L_tensors_2_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    l_tensors_1_ = L_tensors_1_\n    l_tensors_2_ = L_tensors_2_\n    scatter_reduce = torch.scatter_reduce(l_tensors_0_, 0, l_tensors_1_, l_tensors_2_, 'amax', include_self = True);  l_tensors_0_ = l_tensors_1_ = l_tensors_2_ = None\n    return (scatter_reduce,)\n", 'inputs': [{'shape': [10, 5], 'stride': [5, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[-1.5177494287490845, 7.519496917724609, 1.647250771522522, 0.6943777799606323, 4.026985168457031], [-2.679877758026123, -8.4433012008667, 5.194806098937988, -3.6350176334381104, -7.90920352935791], [-5.622043132781982, -0.7386535406112671, -7.017433166503906, 1.7647079229354858, -1.4119877815246582], [0.41789674758911133, -7.970241069793701, 2.5014045238494873, -3.6592764854431152, 2.934680938720703], [-3.3235349655151367, 4.221205711364746, 1.8184701204299927, -8.887520790100098, -5.207923889160156], [-1.8530384302139282, -8.003177642822266, -2.2094171047210693, 8.541403770446777, -7.353768348693848], [-6.941649436950684, 6.664693832397461, -0.7194628715515137, -3.03456974029541, 1.9141831398010254], [-2.502869129180908, -3.6631174087524414, -5.597036361694336, -6.226122856140137, 2.5629043579101562], [7.077117919921875, -7.523540496826172, 0.9876108169555664, -8.896479606628418, 6.263800144195557], [-2.77400279045105, 1.4615474939346313, -4.075406074523926, 0.8560237884521484, 1.8574029207229614]]}, {'shape': [5, 5], 'stride': [5, 1], 'dtype': 'torch.int64', 'device': 'cpu', 'requires_grad': False, 'values': [[9, 6, 9, 2, 3], [2, 4, 5, 8, 6], [7, 7, 3, 9, 0], [8, 2, 6, 3, 7], [6, 3, 1, 5, 8]]}, {'shape': [5, 5], 'stride': [5, 1], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': [[0.457430362701416, -4.202237129211426, -4.1170783042907715, -6.701673984527588, 3.499953269958496], [-8.108909606933594, -5.9319047927856445, 7.436293601989746, 0.8476027250289917, 8.177384376525879], [4.010373592376709, 5.357206344604492, 8.311044692993164, -0.7509005069732666, 6.377486228942871], [7.471103191375732, -8.691481590270996, 0.18878674507141113, -8.821762084960938, -3.9316110610961914], [-2.771799087524414, -3.247438430786133, 5.924411773681641, 4.713410377502441, 0.2138911485671997]]}]}, {'code': 'def forward(self, L_tensors_0_ : torch.Tensor, L_tensors_1_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    l_tensors_1_ = L_tensors_1_\n    linalg_vector_norm = torch._C._linalg.linalg_vector_norm(l_tensors_0_, ord = 1);  l_tensors_0_ = None\n    linalg_vector_norm_1 = torch._C._linalg.linalg_vector_norm(l_tensors_1_, ord = 0);  l_tensors_1_ = None\n    return (linalg_vector_norm, linalg_vector_norm_1)\n', 'inputs': [{'shape': [], 'stride': [], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': -1.5177494287490845}, {'shape': [], 'stride': [], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': -1.5177494287490845}]}, {'code': 'def forward(self, L_tensors_0_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    linalg_vector_norm = torch._C._linalg.linalg_vector_norm(l_tensors_0_, ord = 1);  l_tensors_0_ = None\n    return (linalg_vector_norm,)\n', 'inputs': [{'shape': [], 'stride': [], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': -1.5177494287490845}]}, {'code': 'def forward(self, L_tensors_0_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    linalg_vector_norm = torch._C._linalg.linalg_vector_norm(l_tensors_0_, ord = 0);  l_tensors_0_ = None\n    return (linalg_vector_norm,)\n', 'inputs': [{'shape': [], 'stride': [], 'dtype': 'torch.float32', 'device': 'cpu', 'requires_grad': True, 'values': -1.5177494287490845}]}]


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
