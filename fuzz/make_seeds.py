#!/usr/bin/python3
"""Writes the seed corpora in fuzz/corpus/<target>/: small valid files of each
kind the readers take (the same shapes of files the unit tests make).
Run from anywhere: /usr/bin/python3 fuzz/make_seeds.py"""
import io, json, os, zipfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus'))
for d in ('npy', 'npz', 'tensor_proto', 'model', 'run_config', 'tolerance'):
    os.makedirs(d, exist_ok=True)


def npy(name, a, version=None):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, a, version=version)
    open(f'npy/{name}.npy', 'wb').write(buf.getvalue())


npy('f32_2x3', np.arange(6, dtype=np.float32).reshape(2, 3))
npy('i64_scalar', np.array(7, dtype=np.int64))
npy('bool_4', np.array([True, False, True, True]))
npy('f16_be', np.arange(4, dtype='>f2'))
npy('u8_empty', np.zeros((0, 3), dtype=np.uint8))
npy('f64_v2', np.ones((2, 2), dtype=np.float64), version=(2, 0))
npy('i8_v3', np.arange(-3, 3, dtype=np.int8), version=(3, 0))
buf = io.BytesIO()
np.lib.format.write_array_header_1_0(buf, {'descr': '|V2', 'fortran_order': False, 'shape': (3,)})
open('npy/bf16_3.npy', 'wb').write(buf.getvalue() + bytes(6))

np.savez('npz/plain.npz', a=np.arange(6, dtype=np.float32).reshape(2, 3), b=np.array([1, 2], dtype=np.int32))
np.savez_compressed('npz/samples.npz', **{'typical/images': np.ones((1, 3, 2, 2), np.float32),
                                          'boundary/images': np.zeros((1, 3, 2, 2), np.float32)})
np.savez('npz/empty.npz')
with zipfile.ZipFile('npz/stray.npz', 'w') as z:
    z.writestr('x.npy', open('npy/bool_4.npy', 'rb').read())
    z.writestr('dir/', b'')


def pb(name, t):
    open(f'tensor_proto/{name}.pb', 'wb').write(t.SerializeToString())


pb('f32_raw', numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), 'x'))
pb('i64_raw', numpy_helper.from_array(np.array([1, -2, 3], dtype=np.int64), 'ids'))
pb('f32_typed', helper.make_tensor('t', TensorProto.FLOAT, [2, 2], [1., 2., 3., 4.]))
pb('u8_typed', helper.make_tensor('u', TensorProto.UINT8, [3], [1, 2, 255]))
pb('f16_typed', helper.make_tensor('h', TensorProto.FLOAT16, [2],
                                   np.array([1, 2], np.float16).view(np.uint16).tolist()))
pb('str', helper.make_tensor('s', TensorProto.STRING, [2], [b'ab', b'c']))
pb('bool', helper.make_tensor('b', TensorProto.BOOL, [3], [1, 0, 1]))
pb('f64_typed', helper.make_tensor('d', TensorProto.DOUBLE, [2], [1.5, -2.5]))
pb('u64_typed', helper.make_tensor('q', TensorProto.UINT64, [2], [1, 2**63]))
pb('scalar_unnamed', numpy_helper.from_array(np.array(3.0, dtype=np.float32)))


def save(name, graph, opset=17, ir=8):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset)], producer_name='parity-fuzz-seed')
    m.ir_version = ir
    open(f'model/{name}.onnx', 'wb').write(m.SerializeToString())


X = helper.make_tensor_value_info('x', TensorProto.FLOAT, ['N', 3, 4, 4])
Y = helper.make_tensor_value_info('y', TensorProto.FLOAT, None)
A = helper.make_tensor_value_info('a', TensorProto.FLOAT, [2])
init = lambda a, n: numpy_helper.from_array(a, n)
save('conv_bn_relu', helper.make_graph([
    helper.make_node('Conv', ['x', 'w'], ['c'], name='conv', kernel_shape=[1, 1]),
    helper.make_node('BatchNormalization', ['c', 's', 'b', 'm', 'v'], ['bn'], name='bn'),
    helper.make_node('Relu', ['bn'], ['y'], name='relu')], 'g', [X], [Y],
    [init(np.ones((2, 3, 1, 1), np.float32), 'w'), init(np.ones(2, np.float32), 's'),
     init(np.zeros(2, np.float32), 'b'), init(np.zeros(2, np.float32), 'm'), init(np.ones(2, np.float32), 'v')]))
save('chain', helper.make_graph([helper.make_node('Identity', ['a'], ['t1']),
                                 helper.make_node('Identity', ['t1'], ['t2']),
                                 helper.make_node('Add', ['t1', 't2'], ['y'])], 'chain', [A], [Y]))
then_g = helper.make_graph([helper.make_node('Identity', ['a'], ['o1'])], 'then', [],
                           [helper.make_tensor_value_info('o1', TensorProto.FLOAT, [2])])
else_g = helper.make_graph([helper.make_node('Neg', ['a'], ['o2'])], 'else', [],
                           [helper.make_tensor_value_info('o2', TensorProto.FLOAT, [2])])
save('if_subgraph', helper.make_graph(
    [helper.make_node('If', ['cond'], ['y'], then_branch=then_g, else_branch=else_g)], 'ifg',
    [helper.make_tensor_value_info('cond', TensorProto.BOOL, []), A], [Y]))
save('matmul_softmax', helper.make_graph(
    [helper.make_node('MatMul', ['a2', 'wm'], ['mm']), helper.make_node('Softmax', ['mm'], ['y'], axis=-1)], 'mm',
    [helper.make_tensor_value_info('a2', TensorProto.FLOAT, ['B', 4])], [Y], [init(np.eye(4, dtype=np.float32), 'wm')]))
save('optional_input', helper.make_graph([helper.make_node('Clip', ['a', '', 'mx'], ['y'])], 'clip', [A], [Y],
                                         [init(np.array(1, np.float32), 'mx')]))
save('new_ir', helper.make_graph([helper.make_node('Relu', ['a'], ['y'])], 'relu', [A], [Y]), opset=21, ir=10)

configs = {
    'all': {'opt': 'all', 'providers': ['cpu'], 'intra_op_threads': 1, 'inter_op_threads': 0},
    'full': {'opt': 'extended', 'providers': ['cuda', 'cpu'], 'intra_op_threads': 2, 'inter_op_threads': 1,
             'execution_mode': 'parallel', 'disable_optimizers': ['BiasGeluFusion', 'GeluFusion'],
             'session_config': {'session.use_env_allocators': '1', 'x': 2, 'y': True},
             'optimized_model_path': 'opt.onnx'},
    'ort_name': {'opt': 'ORT_DISABLE_ALL', 'execution_mode': 'sequential'},
    'empty': {},
}
for k, c in configs.items():
    open(f'run_config/{k}.json', 'w').write(json.dumps(c))
policies = {
    'fixed': {'atol': 1e-4, 'rtol': 1e-3},
    'rules': {'atol': 1e-3, 'rtol': 0, 'decide_by': 'max', 'mode': 'adaptive',
              'outputs': [{'match': 'logits', 'atol': 0.01, 'decide_by': 'quantile', 'quantile': 0.99},
                          {'match': 'box*', 'rtol': 0.1, 'mode': 'fixed'}]},
    'calibrated': {'mode': 'calibrated', 'calibration_multiplier': 5, 'quantized': True, 'decide_by': 'mean'},
}
for k, c in policies.items():
    open(f'tolerance/{k}.json', 'w').write(json.dumps(c))

os.makedirs('torch_manifest', exist_ok=True)
manifests = {
    'conv_bn_relu': {
        'schema': 'parity.torch_dump/1', 'torch_version': '1.13.1',
        'inputs': {'images': 'input_images.npy'}, 'outputs': {'logits': 'output_logits.npy'},
        'layers': [
            {'file': 'layer_0000_conv.npy', 'module': 'conv', 'type': 'Conv2d', 'call': 0, 'output_index': None,
             'dtype': 'float32', 'shape': [1, 8, 16, 16], 'is_leaf': True},
            {'file': 'layer_0001_bn.npy', 'module': 'bn', 'type': 'BatchNorm2d', 'call': 0, 'output_index': None,
             'dtype': 'float32', 'shape': [1, 8, 16, 16]},
            {'file': 'layer_0002_act.npy', 'module': 'act', 'type': 'ReLU', 'call': 1, 'output_index': None,
             'dtype': 'bfloat16', 'shape': [1, 8, 16, 16]},
            {'file': 'layer_0003_split.npy', 'module': 'block.split', 'type': 'Split', 'call': 0, 'output_index': 1,
             'dtype': 'float16', 'shape': [0, 4]},
            {'file': 'layer_0004_.npy', 'module': '', 'type': 'Net', 'call': 0, 'output_index': None,
             'dtype': 'float32', 'shape': [1, 10]}],
        'export': {'exporter': 'torchscript', 'opset': 17, 'input_names': ['images'], 'output_names': ['logits'],
                   'dynamic_axes': {'images': {'0': 'batch'}}},
    },
    'minimal': {'schema': 'parity.torch_dump/1', 'torch_version': '2.1.0', 'inputs': {}, 'outputs': {},
                'layers': []},
    'dynamo': {'schema': 'parity.torch_dump/1', 'torch_version': '2.1.0', 'extra': [1, 2],
               'inputs': {'x': 'input_x.npy', 'y': 'input_y.npy'}, 'outputs': {'out': 'output_out.npy'},
               'outputs_fp64': {'out': 'output_fp64_out.npy'},
               'layers': [{'file': 'layer_0000_fc.npy', 'module': 'fc', 'type': 'Linear', 'call': 0,
                           'output_index': 0, 'dtype': 'int64', 'shape': []}],
               'export': {'exporter': 'dynamo', 'opset': 18, 'input_names': [], 'output_names': [],
                          'dynamic_axes': {}}},
}
for k, m in manifests.items():
    open(f'torch_manifest/{k}.json', 'w').write(json.dumps(m))

# string_tensor: recipes (fuzz/string_tensor_fuzz.cc): dims count, int64 dims,
# entry count, (length, bytes) per entry, a raw_data flag.
import struct
os.makedirs('string_tensor', exist_ok=True)
def recipe(name, dims, entries, raw=0):
    b = bytes([len(dims)]) + b''.join(struct.pack('<q', d) for d in dims)
    b += bytes([len(entries)]) + b''.join(bytes([len(e)]) + e for e in entries) + bytes([raw])
    open(f'string_tensor/{name}.bin', 'wb').write(b)
recipe('honest_2', [2], [b'a', b'bc'])
recipe('honest_2x2', [2, 2], [b'a', b'b', b'c', b'd'])
recipe('scalar', [], [b'x'])
recipe('empty', [0, 5], [])
recipe('lying_2e8', [200000000], [b'x'])
recipe('negative', [-1], [b'x'])
recipe('overflow', [1 << 62, 4], [])
recipe('raw', [1], [b'a'], raw=1)

# npz_directory: recipes (fuzz/npz_directory_fuzz.cc): entry count, then per
# entry name index, method, offset selector (+u16), u32 comp, u32 size, u32 CRC, flags.
os.makedirs('npz_directory', exist_ok=True)
def entry(name=0, method=0, off=0, comp=0, full=0, crc=0, honest=1):
    b = bytes([name, method, off])
    if off:
        b += (0x40).to_bytes(2, 'little')
    return b + comp.to_bytes(4, 'little') + full.to_bytes(4, 'little') + crc.to_bytes(4, 'little') + bytes([honest])
open('npz_directory/honest.bin', 'wb').write(bytes([1]) + entry())
open('npz_directory/shared_stream_64.bin', 'wb').write(
    bytes([64]) + b''.join(entry(name=i % 3, honest=0, comp=160, full=60_000_000) for i in range(64)))
open('npz_directory/duplicate_names.bin', 'wb').write(bytes([2]) + entry(0) + entry(3))
open('npz_directory/deflate_lie.bin', 'wb').write(bytes([1]) + entry(method=8, honest=0, comp=160, full=0xffffffff))
open('npz_directory/bad_offset.bin', 'wb').write(bytes([1]) + entry(off=1))

# worker_protocol: the one worker protocol's lines (src/core/worker_protocol.h): entry
# records (the Ray engine's entry list, every worker's requests) and every worker's replies.
os.makedirs('worker_protocol', exist_ok=True)
open('worker_protocol/valid', 'w').write('{"index":0,"path_hex":"2f746d702f612e6e707a"}')
open('worker_protocol/max_index_newline', 'w').write('{"index":9007199254740992,"path_hex":"610a62"}')
open('worker_protocol/old_form', 'w').write('0\t/etc/passwd')
open('worker_protocol/ready', 'w').write('O\t1.29.0\t/opt/ort/lib/libonnxruntime.so')
open('worker_protocol/done', 'w').write('E\t12')
open('worker_protocol/failed', 'w').write('B\t3\tjob\tnode \'x\' (Add): shape mismatch')
open('worker_protocol/requests', 'w').write('{"index":0,"path_hex":"2f746d702f6a6f6230"}\n0\t/tmp/job0\n')
open('worker_protocol/dataset_answer', 'w').write('O\t1\nR\t0\ts.npz\ts\t0x0p+0\t0x1p+0\tinf\t0x0p+0\t0x0p+0\t1\t0\t0\n'
                                                  'B\t0\ts2\tunreadable\nE\t0\n')
