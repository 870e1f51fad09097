"""Standalone repro of a dynamo-aot-suite problem: mycc-fail-declared-unsupported-float64-yet-an-answer-82c5ec

FAIL on backend mycc, 1 test(s); made from test.dynamo.test_op_sweep.OpSweepTests_mycc.test_values_float64
  OpCheckFailure: float64: sin on small values: compiled call raised BackendCompilerFailed: backend="CompileCounterWithBackend(CompileCounterWithBackend('examples/mycc/mycc/backend.py:mycc', frames=2, ops=32), frames=2, ops=32)" raised: UnsupportedDtype: mycc has no float64 kernels (placeholder arg0_1); nn.functional.silu on small values: compiled call raised BackendCompilerFailed: backend="Compile…

Written by python run_tests.py with torch 2.13.0+cpu.

    python mycc-fail-declared-unsupported-float64-yet-an-answer-82c5ec.py                      # exit 1: the problem shows; 0: it does not
    python mycc-fail-declared-unsupported-float64-yet-an-answer-82c5ec.py --backend aot_eager  # the same against another backend
"""

from __future__ import annotations

import argparse
import builtins
import importlib
import importlib.util
import math
import operator
import os
import subprocess
import sys
import types
from typing import Any

import torch

PROBLEM = 'mycc-fail-declared-unsupported-float64-yet-an-answer-82c5ec'
BACKEND = 'examples/mycc/mycc/backend.py:mycc'
SEARCH_PATH = ['/work/main', '/work/main']
SCENARIO = ['test.dynamo.test_op_sweep', 'OpSweepTests', 'test_values_float64']
ENVIRONMENT = {'DYNAMO_SUITE_UNSUPPORTED': 'float64'}
CLASS_SUFFIX = ''
COMPILE_OPTIONS = {}
TIME_LIMIT = 63.0
GRAPHS = [{'code': 'def forward(self, L_tensors_0_ : torch.Tensor, L_tensors_1_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    l_tensors_1_ = L_tensors_1_\n    mm = torch.mm(l_tensors_0_, l_tensors_1_);  l_tensors_0_ = l_tensors_1_ = None\n    return (mm,)\n', 'inputs': [{'shape': [5, 10], 'stride': [10, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'values': [[3.0, 3.0, 1.0, 1.0, 3.0, 2.0, 3.0, 3.0, 1.0, 1.0], [3.0, 2.0, 3.0, 3.0, 1.0, 1.0, 3.0, 2.0, 3.0, 3.0], [1.0, 1.0, 3.0, 2.0, 3.0, 3.0, 1.0, 1.0, 3.0, 2.0], [3.0, 3.0, 1.0, 1.0, 3.0, 2.0, 3.0, 3.0, 1.0, 1.0], [3.0, 2.0, 3.0, 3.0, 1.0, 1.0, 3.0, 2.0, 3.0, 3.0]]}, {'shape': [10, 5], 'stride': [5, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'values': [[-7.141634518372592, 6.337555303644553, -3.9996745723806497, 0.6256102569583544, 4.47001732860231], [6.800428847386412, -1.6329967449505767, -8.699475530241093, 4.16857432999202, -2.1956033665979735], [-4.344410789901768, 8.544894131158808, 3.9303425946715587, -7.990700649568102, 1.8150962950288028], [3.8656324501051254, 2.3126283441629774, -0.18072654427658552, 5.338122106656896, 8.181518561526035], [-2.170103985693759, 1.5565995741510157, 4.948702732777534, 2.156947649175071, -6.497938728149347], [-8.193822703226937, 6.198772490903114, 8.735761159117462, -7.2704097377782295, -4.034641824835352], [-3.2451309389319345, -1.9931317396742905, 4.491594490393534, 3.751270837501587, -4.697932492867354], [-4.93704959240263, 6.984602570524108, -4.880006622952722, 5.1668099478853176, 8.393474535504362], [3.9322109714939604, -4.870978349175125, -6.376224803609807, 8.80295800796607, 1.181332062861349], [-8.027075072464587, -1.2601027615878222, -0.3129623637879253, 3.2190273689800772, 6.072132777133943]]}]}, {'code': 'def forward(self, L_tensors_0_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    split = torch.functional.split(l_tensors_0_, 2);  l_tensors_0_ = None\n    getitem = split[0]\n    getitem_1 = split[1]\n    getitem_2 = split[2];  split = None\n    return (getitem, getitem_1, getitem_2)\n', 'inputs': [{'shape': [5, 5, 5], 'stride': [25, 5, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'range': [1.0, 3.0]}]}, {'code': "def forward(self, L_tensors_0_ : torch.Tensor, L_tensors_1_ : torch.Tensor, L_tensors_2_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    l_tensors_1_ = L_tensors_1_\n    l_tensors_2_ = L_tensors_2_\n    scatter = torch.scatter(l_tensors_0_, 0, l_tensors_1_, l_tensors_2_, reduce = 'add');  l_tensors_0_ = l_tensors_1_ = l_tensors_2_ = None\n    return (scatter,)\n", 'inputs': [{'shape': [10, 5], 'stride': [5, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'values': [[3.0, 3.0, 1.0, 1.0, 3.0], [2.0, 3.0, 3.0, 1.0, 1.0], [3.0, 2.0, 3.0, 3.0, 1.0], [1.0, 3.0, 2.0, 3.0, 3.0], [1.0, 1.0, 3.0, 2.0, 3.0], [3.0, 1.0, 1.0, 3.0, 2.0], [3.0, 3.0, 1.0, 1.0, 3.0], [2.0, 3.0, 3.0, 1.0, 1.0], [3.0, 2.0, 3.0, 3.0, 1.0], [1.0, 3.0, 2.0, 3.0, 3.0]]}, {'shape': [5, 5], 'stride': [5, 1], 'dtype': 'torch.int64', 'device': 'cpu', 'requires_grad': False, 'values': [[1, 1, 7, 4, 4], [9, 7, 9, 6, 0], [4, 3, 1, 1, 2], [8, 4, 3, 9, 7], [2, 6, 6, 7, 1]]}, {'shape': [5, 5], 'stride': [5, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'values': [[-2.0946595857020136, -4.608987095183213, -5.813276345653884, 5.4179984776300305, -7.22666140325932], [3.0765556282665543, 4.722571352255846, 4.258409160597916, -8.950426707275476, -3.5206615651278783], [-3.865977946493946, 8.507850483595874, 1.318967952407652, -5.099417602646956, 4.958584648119285], [7.1546593453192155, -8.185089291680262, 8.800029192336883, 2.5389560964258884, 7.768773363117075], [5.55186028401436, -2.724415147169183, 4.705715147073594, -3.772225706898632, -1.6189745784068863]]}]}, {'code': 'def forward(self, L_tensors_0_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    adaptive_avg_pool2d = torch.nn.functional.adaptive_avg_pool2d(l_tensors_0_, (5, 7));  l_tensors_0_ = None\n    return (adaptive_avg_pool2d,)\n', 'inputs': [{'shape': [1, 8, 8, 8], 'stride': [512, 64, 8, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'range': [1.0, 3.0]}]}, {'code': 'def forward(self, L_tensors_0_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    upsample_nearest = torch.nn.functional.upsample_nearest(l_tensors_0_, size = (3,));  l_tensors_0_ = None\n    return (upsample_nearest,)\n', 'inputs': [{'shape': [2, 3, 4], 'stride': [12, 4, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'values': [[[3.0, 3.0, 1.0, 1.0], [3.0, 2.0, 3.0, 3.0], [1.0, 1.0, 3.0, 2.0]], [[3.0, 3.0, 1.0, 1.0], [3.0, 2.0, 3.0, 3.0], [1.0, 1.0, 3.0, 2.0]]]}]}, {'code': 'def forward(self, L_tensors_0_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    cumsum = torch.cumsum(l_tensors_0_, 0);  l_tensors_0_ = None\n    return (cumsum,)\n', 'inputs': [{'shape': [5, 5, 5], 'stride': [25, 5, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'range': [1.0, 3.0]}]}, {'code': "def forward(self, L_tensors_0_ : torch.Tensor, L_tensors_1_ : torch.Tensor, L_tensors_2_ : torch.Tensor, L_tensors_3_ : torch.Tensor, L_tensors_5_ : torch.Tensor, L_tensors_4_ : torch.Tensor, L_tensors_6_ : torch.Tensor, L_tensors_7_ : torch.Tensor, L_tensors_8_ : torch.Tensor, L_tensors_9_ : torch.Tensor, L_tensors_10_ : torch.Tensor, L_tensors_11_ : torch.Tensor, L_tensors_12_ : torch.Tensor, L_tensors_13_ : torch.Tensor, L_tensors_14_ : torch.Tensor, L_tensors_15_ : torch.Tensor, L_tensors_16_ : torch.Tensor, L_tensors_17_ : torch.Tensor, L_tensors_18_ : torch.Tensor, L_tensors_19_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    l_tensors_1_ = L_tensors_1_\n    l_tensors_2_ = L_tensors_2_\n    l_tensors_3_ = L_tensors_3_\n    l_tensors_5_ = L_tensors_5_\n    l_tensors_4_ = L_tensors_4_\n    l_tensors_6_ = L_tensors_6_\n    l_tensors_7_ = L_tensors_7_\n    l_tensors_8_ = L_tensors_8_\n    l_tensors_9_ = L_tensors_9_\n    l_tensors_10_ = L_tensors_10_\n    l_tensors_11_ = L_tensors_11_\n    l_tensors_12_ = L_tensors_12_\n    l_tensors_13_ = L_tensors_13_\n    l_tensors_14_ = L_tensors_14_\n    l_tensors_15_ = L_tensors_15_\n    l_tensors_16_ = L_tensors_16_\n    l_tensors_17_ = L_tensors_17_\n    l_tensors_18_ = L_tensors_18_\n    l_tensors_19_ = L_tensors_19_\n    sin = torch.sin(l_tensors_0_);  l_tensors_0_ = None\n    silu = torch.nn.functional.silu(l_tensors_1_);  l_tensors_1_ = None\n    pow_1 = torch.pow(l_tensors_2_, l_tensors_3_);  l_tensors_2_ = l_tensors_3_ = None\n    where = torch.where(l_tensors_5_, l_tensors_4_, l_tensors_6_);  l_tensors_5_ = l_tensors_4_ = l_tensors_6_ = None\n    lerp = torch.lerp(l_tensors_7_, l_tensors_8_, 0.4);  l_tensors_7_ = l_tensors_8_ = None\n    amax = torch.amax(l_tensors_9_);  l_tensors_9_ = None\n    var = torch.var(l_tensors_10_);  l_tensors_10_ = None\n    mm = torch.mm(l_tensors_11_, l_tensors_12_);  l_tensors_11_ = l_tensors_12_ = None\n    split = torch.functional.split(l_tensors_13_, 2);  l_tensors_13_ = None\n    getitem = split[0]\n    getitem_1 = split[1]\n    getitem_2 = split[2];  split = None\n    scatter = torch.scatter(l_tensors_14_, 0, l_tensors_15_, l_tensors_16_, reduce = 'add');  l_tensors_14_ = l_tensors_15_ = l_tensors_16_ = None\n    adaptive_avg_pool2d = torch.nn.functional.adaptive_avg_pool2d(l_tensors_17_, (5, 7));  l_tensors_17_ = None\n    upsample_nearest = torch.nn.functional.upsample_nearest(l_tensors_18_, size = (3,));  l_tensors_18_ = None\n    cumsum = torch.cumsum(l_tensors_19_, 0);  l_tensors_19_ = None\n    return (sin, silu, pow_1, where, lerp, amax, var, mm, getitem, getitem_1, getitem_2, scatter, adaptive_avg_pool2d, upsample_nearest, cumsum)\n", 'inputs': [{'shape': [20, 20], 'stride': [20, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'range': [-8.972567283361268, 8.966940210243301]}, {'shape': [20], 'stride': [1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'values': [-1.5695383015159652, 1.1657618195764707, 4.469433973914953, -3.88892863714562, -0.6461588535608049, 4.3064262035981535, 8.227730747422276, -3.249054499173174, -3.37524641661125, 4.207392809631947, 6.73621955375037, 4.4608171800269965, 2.6581037228941824, -6.679893622758234, -5.613350817171394, -8.954232575953284, -0.4839429201561838, 0.6193446126627904, 4.384211625363605, 1.7557101715048995]}, {'shape': [], 'stride': [], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'values': 3.715230849242017}, {'shape': [], 'stride': [], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'values': 5.082880909788235}, {'shape': [10, 10], 'stride': [10, 1], 'dtype': 'torch.bool', 'device': 'cpu', 'requires_grad': False, 'range': [0, 1]}, {'shape': [10, 10], 'stride': [10, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'range': [-8.954232575953284, 8.806803026093476]}, {'shape': [10, 10], 'stride': [10, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'range': [-8.346076772043203, 8.756231525178341]}, {'shape': [5, 5], 'stride': [5, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'values': [[-1.5695383015159652, 1.1657618195764707, 4.469433973914953, -3.88892863714562, -0.6461588535608049], [4.3064262035981535, 8.227730747422276, -3.249054499173174, -3.37524641661125, 4.207392809631947], [6.73621955375037, 4.4608171800269965, 2.6581037228941824, -6.679893622758234, -5.613350817171394], [-8.954232575953284, -0.4839429201561838, 0.6193446126627904, 4.384211625363605, 1.7557101715048995], [-4.3747730014928115, 8.36546990871051, 1.1385742555486764, -7.8936263275396, -8.477322887316033]]}, {'shape': [5, 5], 'stride': [5, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'values': [[7.988060450378432, -1.2470128860268135, 0.1466725699690392, -3.282191786864076, -8.861785382283298], [8.806803026093476, -3.46375087570343, 0.2867668517553672, 2.1921982231401476, -1.6703165096199983], [8.54151699500134, 0.12006044460081533, 1.6441098274933346, -1.030366075083064, -1.8762230581280421], [-6.764665040408497, -8.562653393590631, -8.333629646888259, -0.36354524715147085, 8.150146747661855], [-4.189213291643538, 2.3238825176107762, -1.6549459885459656, 1.4845346882861985, 6.839532649101673]]}, {'shape': [], 'stride': [], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'values': -1.5695383015159652}, {'shape': [5, 5, 5], 'stride': [25, 5, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'range': [-8.954232575953284, 8.806803026093476]}, {'shape': [5, 10], 'stride': [10, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'values': [[-1.5695383015159652, 1.1657618195764707, 4.469433973914953, -3.88892863714562, -0.6461588535608049, 4.3064262035981535, 8.227730747422276, -3.249054499173174, -3.37524641661125, 4.207392809631947], [6.73621955375037, 4.4608171800269965, 2.6581037228941824, -6.679893622758234, -5.613350817171394, -8.954232575953284, -0.4839429201561838, 0.6193446126627904, 4.384211625363605, 1.7557101715048995], [-4.3747730014928115, 8.36546990871051, 1.1385742555486764, -7.8936263275396, -8.477322887316033, 7.988060450378432, -1.2470128860268135, 0.1466725699690392, -3.282191786864076, -8.861785382283298], [8.806803026093476, -3.46375087570343, 0.2867668517553672, 2.1921982231401476, -1.6703165096199983, 8.54151699500134, 0.12006044460081533, 1.6441098274933346, -1.030366075083064, -1.8762230581280421], [-6.764665040408497, -8.562653393590631, -8.333629646888259, -0.36354524715147085, 8.150146747661855, -4.189213291643538, 2.3238825176107762, -1.6549459885459656, 1.4845346882861985, 6.839532649101673]]}, {'shape': [10, 5], 'stride': [5, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'values': [[-7.141634518372592, 6.337555303644553, -3.9996745723806497, 0.6256102569583544, 4.47001732860231], [6.800428847386412, -1.6329967449505767, -8.699475530241093, 4.16857432999202, -2.1956033665979735], [-4.344410789901768, 8.544894131158808, 3.9303425946715587, -7.990700649568102, 1.8150962950288028], [3.8656324501051254, 2.3126283441629774, -0.18072654427658552, 5.338122106656896, 8.181518561526035], [-2.170103985693759, 1.5565995741510157, 4.948702732777534, 2.156947649175071, -6.497938728149347], [-8.193822703226937, 6.198772490903114, 8.735761159117462, -7.2704097377782295, -4.034641824835352], [-3.2451309389319345, -1.9931317396742905, 4.491594490393534, 3.751270837501587, -4.697932492867354], [-4.93704959240263, 6.984602570524108, -4.880006622952722, 5.1668099478853176, 8.393474535504362], [3.9322109714939604, -4.870978349175125, -6.376224803609807, 8.80295800796607, 1.181332062861349], [-8.027075072464587, -1.2601027615878222, -0.3129623637879253, 3.2190273689800772, 6.072132777133943]]}, {'shape': [5, 5, 5], 'stride': [25, 5, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'range': [-8.954232575953284, 8.806803026093476]}, {'shape': [10, 5], 'stride': [5, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'values': [[-1.5695383015159652, 1.1657618195764707, 4.469433973914953, -3.88892863714562, -0.6461588535608049], [4.3064262035981535, 8.227730747422276, -3.249054499173174, -3.37524641661125, 4.207392809631947], [6.73621955375037, 4.4608171800269965, 2.6581037228941824, -6.679893622758234, -5.613350817171394], [-8.954232575953284, -0.4839429201561838, 0.6193446126627904, 4.384211625363605, 1.7557101715048995], [-4.3747730014928115, 8.36546990871051, 1.1385742555486764, -7.8936263275396, -8.477322887316033], [7.988060450378432, -1.2470128860268135, 0.1466725699690392, -3.282191786864076, -8.861785382283298], [8.806803026093476, -3.46375087570343, 0.2867668517553672, 2.1921982231401476, -1.6703165096199983], [8.54151699500134, 0.12006044460081533, 1.6441098274933346, -1.030366075083064, -1.8762230581280421], [-6.764665040408497, -8.562653393590631, -8.333629646888259, -0.36354524715147085, 8.150146747661855], [-4.189213291643538, 2.3238825176107762, -1.6549459885459656, 1.4845346882861985, 6.839532649101673]]}, {'shape': [5, 5], 'stride': [5, 1], 'dtype': 'torch.int64', 'device': 'cpu', 'requires_grad': False, 'values': [[0, 0, 9, 0, 9], [9, 0, 0, 9, 0], [9, 9, 0, 0, 9], [0, 9, 9, 0, 0], [9, 0, 9, 9, 0]]}, {'shape': [5, 5], 'stride': [5, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'values': [[-2.0946595857020136, -4.608987095183213, -5.813276345653884, 5.4179984776300305, -7.22666140325932], [3.0765556282665543, 4.722571352255846, 4.258409160597916, -8.950426707275476, -3.5206615651278783], [-3.865977946493946, 8.507850483595874, 1.318967952407652, -5.099417602646956, 4.958584648119285], [7.1546593453192155, -8.185089291680262, 8.800029192336883, 2.5389560964258884, 7.768773363117075], [5.55186028401436, -2.724415147169183, 4.705715147073594, -3.772225706898632, -1.6189745784068863]]}, {'shape': [1, 8, 8, 8], 'stride': [512, 64, 8, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'range': [-8.972567283361268, 8.966940210243301]}, {'shape': [2, 3, 4], 'stride': [12, 4, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'values': [[[-1.5695383015159652, 1.1657618195764707, 4.469433973914953, -3.88892863714562], [-0.6461588535608049, 4.3064262035981535, 8.227730747422276, -3.249054499173174], [-3.37524641661125, 4.207392809631947, 6.73621955375037, 4.4608171800269965]], [[2.6581037228941824, -6.679893622758234, -5.613350817171394, -8.954232575953284], [-0.4839429201561838, 0.6193446126627904, 4.384211625363605, 1.7557101715048995], [-4.3747730014928115, 8.36546990871051, 1.1385742555486764, -7.8936263275396]]]}, {'shape': [5, 5, 5], 'stride': [25, 5, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'range': [-8.954232575953284, 8.806803026093476]}]}, {'code': "def forward(self, L_tensors_0_ : torch.Tensor, L_tensors_1_ : torch.Tensor, L_tensors_2_ : torch.Tensor):\n    l_tensors_0_ = L_tensors_0_\n    l_tensors_1_ = L_tensors_1_\n    l_tensors_2_ = L_tensors_2_\n    scatter = torch.scatter(l_tensors_0_, 0, l_tensors_1_, l_tensors_2_, reduce = 'add');  l_tensors_0_ = l_tensors_1_ = l_tensors_2_ = None\n    return (scatter,)\n", 'inputs': [{'shape': [10, 5], 'stride': [5, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'values': [[-1.5695383015159652, 1.1657618195764707, 4.469433973914953, -3.88892863714562, -0.6461588535608049], [4.3064262035981535, 8.227730747422276, -3.249054499173174, -3.37524641661125, 4.207392809631947], [6.73621955375037, 4.4608171800269965, 2.6581037228941824, -6.679893622758234, -5.613350817171394], [-8.954232575953284, -0.4839429201561838, 0.6193446126627904, 4.384211625363605, 1.7557101715048995], [-4.3747730014928115, 8.36546990871051, 1.1385742555486764, -7.8936263275396, -8.477322887316033], [7.988060450378432, -1.2470128860268135, 0.1466725699690392, -3.282191786864076, -8.861785382283298], [8.806803026093476, -3.46375087570343, 0.2867668517553672, 2.1921982231401476, -1.6703165096199983], [8.54151699500134, 0.12006044460081533, 1.6441098274933346, -1.030366075083064, -1.8762230581280421], [-6.764665040408497, -8.562653393590631, -8.333629646888259, -0.36354524715147085, 8.150146747661855], [-4.189213291643538, 2.3238825176107762, -1.6549459885459656, 1.4845346882861985, 6.839532649101673]]}, {'shape': [5, 5], 'stride': [5, 1], 'dtype': 'torch.int64', 'device': 'cpu', 'requires_grad': False, 'values': [[0, 0, 9, 0, 9], [9, 0, 0, 9, 0], [9, 9, 0, 0, 9], [0, 9, 9, 0, 0], [9, 0, 9, 9, 0]]}, {'shape': [5, 5], 'stride': [5, 1], 'dtype': 'torch.float64', 'device': 'cpu', 'requires_grad': False, 'values': [[-2.0946595857020136, -4.608987095183213, -5.813276345653884, 5.4179984776300305, -7.22666140325932], [3.0765556282665543, 4.722571352255846, 4.258409160597916, -8.950426707275476, -3.5206615651278783], [-3.865977946493946, 8.507850483595874, 1.318967952407652, -5.099417602646956, 4.958584648119285], [7.1546593453192155, -8.185089291680262, 8.800029192336883, 2.5389560964258884, 7.768773363117075], [5.55186028401436, -2.724415147169183, 4.705715147073594, -3.772225706898632, -1.6189745784068863]]}]}]


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
        return [f"{name}: values differ from eager ({detail})"]
    return []


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
        first = (str(error).strip().splitlines() or [""])[0]
        return [f"compiled call raised {type(error).__name__}: {first}"]
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
            return [f"backward raised {type(error).__name__}: {(str(error).strip().splitlines() or [''])[0]}"]
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
