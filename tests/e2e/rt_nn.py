#!/usr/bin/python3
"""rt_nn.py [FILTER]: the nn family's run-time dims (docs/dynamic.md) against its constant path.
Each case is an ONNX model with symbolic dims (Conv, ConvTranspose, the pools, BatchNormalization,
Gemm, MatMul, Resize and a chain of them): one program is compiled for ranges of those dims
(--dim LO..HI, --opt 0) and runs inputs of several sizes; each size is also compiled with its dims
bound and its scales/sizes frozen (--opt 0: the plain kernels the backend tests check), and the
two programs' outputs must be the same bits (the chain: within 1e-5). A size the constant path
refuses (an axis a scale makes empty) is reported, and the run-time program must refuse it too
(PREFIX_ERR_SHAPE). RT_NN_TARGET=cuda: the run-time program is built with --target cuda
--cuda-emu (its kernels; a Resize's outputs still the same bits, the others within 1e-5). Run from the repository with Debian's /usr/bin/python3 (onnx, numpy) after
make; work files in $TMPDIR/rt_nn. ONNXCC and OX_CFLAGS (e.g. -fsanitize=address,undefined)
as for conformance.sh. Exit status 1 when a check fails."""
import numpy as np, onnx, os, subprocess, sys, shutil, tempfile
from onnx import helper as h, numpy_helper as nh, TensorProto as TP
ROOT=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ONNXCC=os.environ.get('ONNXCC', ROOT+'/onnxcc'); OXCMP=ROOT+'/tests/e2e/oxcmp'
CFLAGS=os.environ.get('OX_CFLAGS', '').split()
CUDA=os.environ.get('RT_NN_TARGET')=='cuda'
W=os.path.join(tempfile.gettempdir(), 'rt_nn'+('_cuda' if CUDA else ''))
rng=np.random.default_rng(7)
F32=TP.FLOAT
def vi(n, dims, t=F32): return h.make_tensor_value_info(n, t, dims)
def run(cmd, **k):
    r=subprocess.run(cmd, capture_output=True, text=True, **k)
    return r.returncode, r.stdout+r.stderr
def build(d, model, flags, cuda=False):
    os.makedirs(d, exist_ok=True)
    if cuda:
        rc,out=run([ONNXCC, model, '-o', d+'/net.c', '--main', '--opt', '0', '--target', 'cuda', '--cuda-emu', '--build']+flags)
        return 'compile: '+out.strip().split('\n')[-1] if rc else None
    rc,out=run([ONNXCC, model, '-o', d+'/net.c', '--main', '--opt', '0']+flags)
    if rc: return 'compile: '+out.strip().split('\n')[0]
    rc,out=run(['cc','-std=c11','-O1','-Wall','-Wextra']+CFLAGS+['-o',d+'/net',d+'/net.c',d+'/net_main.c',d+'/net_weights.c','-lm'])
    if rc: return 'build: '+out.strip().split('\n')[0]
    warn=[l for l in out.split('\n') if 'warning' in l and 'dims0' not in l and 'ox_d' not in l]
    if warn: return 'warning: '+warn[0]
    return None
def runnet(d, ins, outdir):
    shutil.rmtree(outdir, ignore_errors=True)
    rc,out=run([d+'/net']+ins+['-o',outdir])
    return rc,out
fails=0; total=0
def case(name, nodes, inputs, outputs, rtflags, sizes, gen, static_flags, opset=19, inits=(), tol=None, extra_ins=None):
    """inputs: [(name, dims)], sizes: list of dicts sym->value, gen(sizes)->list of arrays (all inputs)"""
    global fails, total
    if len(sys.argv)>1 and sys.argv[1] not in name: return
    d=f'{W}/{name}'; shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
    g=h.make_graph(nodes, name, [vi(n,dm,t) for n,dm,t in inputs], [vi(n,None,t) for n,t in outputs], initializer=list(inits))
    m=h.make_model(g, opset_imports=[h.make_opsetid('',opset)]); m.ir_version=8
    onnx.save(m, d+'/model.onnx')
    err=build(d+'/rt', d+'/model.onnx', rtflags, CUDA)
    if err: print(f'{name}: RT {err}'); fails+=1; total+=1; return
    for si,sz in enumerate(sizes):
        total+=1
        arrs=gen(sz)
        files=[]
        for (n,_,_),a in zip(inputs,arrs):
            f=f'{d}/in{si}_{n}.pb'; open(f,'wb').write(nh.from_array(a,n).SerializeToString()); files.append(f)
        sf=static_flags(sz, files)
        err=build(f'{d}/st{si}', d+'/model.onnx', sf)
        if err and 'empty' in err:
            rc1,o1=runnet(d+'/rt', files, f'{d}/ort{si}')
            if 'not ones the program was compiled for' not in o1:
                print(f'{name} {sz}: the constant path refuses ({err}), the run-time program did not: {o1.strip()[:200]}'); fails+=1
            continue
        if err: print(f'{name} {sz}: STATIC {err}'); fails+=1; continue
        keep=[f for f,(n,_,_) in zip(files,inputs) if not any(x==f'--const' and y.startswith(n+'=') for x,y in zip(sf,sf[1:]))]
        rc1,o1=runnet(d+'/rt', files, f'{d}/ort{si}')
        rc2,o2=runnet(f'{d}/st{si}', keep, f'{d}/ost{si}')
        if rc1 or rc2: print(f'{name} {sz}: RUN rt {rc1} {o1.strip()[:200]} / static {rc2} {o2.strip()[:200]}'); fails+=1; continue
        ok=True
        for k in range(len(outputs)):
            if CUDA and tol is None and not name.startswith('resize'): tol=1e-5 # (the kernels' own order of sums)
            t=['--rtol','0','--atol','0'] if tol is None else ['--rtol',str(tol),'--atol',str(tol)]
            rc,out=run([OXCMP]+t+[f'{d}/ort{si}/output_{k}.npy', f'{d}/ost{si}/output_{k}.npy'])
            if rc: print(f'{name} {sz} output {k}: {out.strip()[:300]}'); ok=False
        if not ok: fails+=1
    print(f'{name}: {len(sizes)} sizes done')

def rnd(*s): return rng.standard_normal(s).astype(np.float32)
def shp(sym, sz): return [sz.get(x, x) if isinstance(x,str) else x for x in sym]
def bind(sz): 
    f=[]
    for k,v in sz.items(): f+=['--dim',f'{k}={v}']
    return f

# ---- Conv ----
Wc=nh.from_array(rnd(8,3,3,3),'W'); Bc=nh.from_array(rnd(8),'B')
for ap in ['SAME_UPPER','SAME_LOWER']:
    for st in [1,2,3]:
        case(f'conv_{ap}_s{st}', [h.make_node('Conv',['x','W','B'],['y'],auto_pad=ap,strides=[st,st],kernel_shape=[3,3],dilations=[1,2] if st==1 else [1,1])],
             [('x',['N',3,'H','V'],F32)], [('y',F32)], ['--dim','N=1..3','--dim','H=3..20','--dim','V=2..17'],
             [dict(N=1,H=3,V=2),dict(N=2,H=7,V=8),dict(N=3,H=20,V=17),dict(N=1,H=10,V=5)],
             lambda s: [rnd(s['N'],3,s['H'],s['V'])], lambda s,f: bind(s), inits=[Wc,Bc])
Wg=nh.from_array(rnd(6,2,3,2),'Wg')
case('conv_pads_group', [h.make_node('Conv',['x','Wg'],['y'],pads=[1,0,2,1],strides=[2,1],group=2)],
     [('x',['N',4,'H','V'],F32)], [('y',F32)], ['--dim','N=1..3','--dim','H=2..20','--dim','V=2..17'],
     [dict(N=1,H=2,V=2),dict(N=2,H=7,V=8),dict(N=3,H=20,V=17)],
     lambda s: [rnd(s['N'],4,s['H'],s['V'])], lambda s,f: bind(s), inits=[Wg])
W1=nh.from_array(rnd(4,3,5),'W1')
case('conv1d_valid', [h.make_node('Conv',['x','W1'],['y'],auto_pad='VALID',strides=[2])],
     [('x',['N',3,'L'],F32)], [('y',F32)], ['--dim','N=1..2','--dim','L=5..30'],
     [dict(N=1,L=5),dict(N=2,L=6),dict(N=2,L=30)], lambda s: [rnd(s['N'],3,s['L'])], lambda s,f: bind(s), inits=[W1])
# ---- ConvTranspose ----
Wt=nh.from_array(rnd(3,4,3,3),'Wt')
case('convt_plain', [h.make_node('ConvTranspose',['x','Wt'],['y'],strides=[2,2],pads=[1,0,0,1],output_padding=[1,0])],
     [('x',['N',3,'H','V'],F32)], [('y',F32)], ['--dim','N=1..2','--dim','H=1..9','--dim','V=2..9'],
     [dict(N=1,H=1,V=2),dict(N=2,H=5,V=9)], lambda s: [rnd(s['N'],3,s['H'],s['V'])], lambda s,f: bind(s), inits=[Wt])
for ap in ['SAME_UPPER','SAME_LOWER']:
    case(f'convt_{ap}', [h.make_node('ConvTranspose',['x','Wt'],['y'],strides=[2,3],auto_pad=ap)],
         [('x',['N',3,'H','V'],F32)], [('y',F32)], ['--dim','N=1..2','--dim','H=1..9','--dim','V=2..9'],
         [dict(N=1,H=1,V=2),dict(N=2,H=5,V=9)], lambda s: [rnd(s['N'],3,s['H'],s['V'])], lambda s,f: bind(s), inits=[Wt])
case('convt_output_shape', [h.make_node('ConvTranspose',['x','Wt'],['y'],strides=[2,2],output_shape=[10,11])],
     [('x',['N',3,'H','V'],F32)], [('y',F32)], ['--dim','N=1..2','--dim','H=3..6','--dim','V=4..6'],
     [dict(N=1,H=3,V=4),dict(N=2,H=5,V=5),dict(N=1,H=6,V=6)], lambda s: [rnd(s['N'],3,s['H'],s['V'])], lambda s,f: bind(s), inits=[Wt])
# ---- pools ----
for op in ['MaxPool','AveragePool']:
    for i,att in enumerate([dict(kernel_shape=[3,3],strides=[2,2],ceil_mode=1,pads=[0,1,1,1]),
                            dict(kernel_shape=[3,2],strides=[2,3],ceil_mode=1),
                            dict(kernel_shape=[3,3],strides=[2,2],auto_pad='SAME_UPPER'),
                            dict(kernel_shape=[2,3],strides=[3,2],auto_pad='SAME_LOWER'),
                            dict(kernel_shape=[2,2],strides=[1,1],pads=[1,1,0,0],dilations=[2,1])]):
        if op=='AveragePool': att=dict(att, count_include_pad=i%2)
        outs=[('y',F32)]+([('idx',TP.INT64)] if op=='MaxPool' and i==0 else [])
        case(f'{op}_{i}', [h.make_node(op,['x'],[o for o,_ in outs],**att)],
             [('x',['N','C','H','V'],F32)], outs, ['--dim','N=1..2','--dim','C=1..3','--dim','H=4..20','--dim','V=4..17'],
             [dict(N=1,C=1,H=4,V=4),dict(N=2,C=3,H=7,V=8),dict(N=1,C=2,H=20,V=17),dict(N=2,C=1,H=9,V=5)],
             lambda s: [rnd(s['N'],s['C'],s['H'],s['V'])], lambda s,f: bind(s))
for op in ['GlobalAveragePool','GlobalMaxPool']:
    case(op, [h.make_node(op,['x'],['y'])], [('x',['N','C','H','V'],F32)], [('y',F32)],
         ['--dim','N=1..2','--dim','C=1..3','--dim','H=1..20','--dim','V=1..17'],
         [dict(N=1,C=1,H=1,V=1),dict(N=2,C=3,H=7,V=8)], lambda s: [rnd(s['N'],s['C'],s['H'],s['V'])], lambda s,f: bind(s))
# ---- BatchNormalization ----
P=[nh.from_array((rng.random(3)+0.5).astype(np.float32),n) for n in ['sc','bi','me','va']]
case('batchnorm', [h.make_node('BatchNormalization',['x','sc','bi','me','va'],['y'])], [('x',['N',3,'H','V'],F32)], [('y',F32)],
     ['--dim','N=1..3','--dim','H=1..9','--dim','V=1..9'], [dict(N=1,H=1,V=1),dict(N=3,H=4,V=9)],
     lambda s: [rnd(s['N'],3,s['H'],s['V'])], lambda s,f: bind(s), inits=P)
case('batchnorm_train', [h.make_node('BatchNormalization',['x','sc','bi','me','va'],['y','rm','rv'],training_mode=1)], [('x',['N',3,'H','V'],F32)],
     [('y',F32),('rm',F32),('rv',F32)],
     ['--dim','N=1..3','--dim','H=1..9','--dim','V=1..9'], [dict(N=1,H=2,V=1),dict(N=3,H=4,V=9)],
     lambda s: [rnd(s['N'],3,s['H'],s['V'])], lambda s,f: bind(s), inits=P)
# ---- Gemm, MatMul ----
Bg=nh.from_array(rnd(5,7),'Bg'); Cg=nh.from_array(rnd(5),'Cg')
case('gemm_M', [h.make_node('Gemm',['a','Bg','Cg'],['y'],transB=1,alpha=0.5,beta=2.0)], [('a',['M',7],F32)], [('y',F32)],
     ['--dim','M=1..9'], [dict(M=1),dict(M=4),dict(M=9)], lambda s: [rnd(s['M'],7)], lambda s,f: bind(s), inits=[Bg,Cg])
case('gemm_act', [h.make_node('Gemm',['a','b','c'],['y'],transA=1)], [('a',['K','M'],F32),('b',['K','N'],F32),('c',['P','N'],F32)], [('y',F32)],
     ['--dim','M=1..9','--dim','K=1..9','--dim','N=1..9','--dim','P=1..9'],
     [dict(M=1,K=1,N=1,P=1),dict(M=4,K=3,N=5,P=1),dict(M=4,K=3,N=5,P=4)], lambda s: [rnd(s['K'],s['M']),rnd(s['K'],s['N']),rnd(s['P'],s['N'])], lambda s,f: bind(s))
Bm=nh.from_array(rnd(6,5),'Bm')
case('matmul_batch_M', [h.make_node('MatMul',['a','Bm'],['y'])], [('a',['B','M',6],F32)], [('y',F32)],
     ['--dim','B=1..3','--dim','M=1..9'], [dict(B=1,M=1),dict(B=3,M=4)], lambda s: [rnd(s['B'],s['M'],6)], lambda s,f: bind(s), inits=[Bm])
case('matmul_attn', [h.make_node('MatMul',['q','k'],['y'])], [('q',['B',2,'S',4],F32),('k',['B',2,4,'T'],F32)], [('y',F32)],
     ['--dim','B=1..3','--dim','S=1..9','--dim','T=1..9'], [dict(B=1,S=1,T=1),dict(B=3,S=4,T=7)],
     lambda s: [rnd(s['B'],2,s['S'],4),rnd(s['B'],2,4,s['T'])], lambda s,f: bind(s))
case('matmul_bcast', [h.make_node('MatMul',['q','k'],['y'])], [('q',['B',1,'S','K'],F32),('k',['H','K',3],F32)], [('y',F32)],
     ['--dim','B=1..3','--dim','S=1..9','--dim','K=1..5','--dim','H=1..4'], [dict(B=1,S=1,K=1,H=1),dict(B=3,S=4,K=5,H=2),dict(B=2,S=3,K=2,H=4)],
     lambda s: [rnd(s['B'],1,s['S'],s['K']),rnd(s['H'],s['K'],3)], lambda s,f: bind(s))
case('matmul_1d', [h.make_node('MatMul',['a','b'],['y'])], [('a',['K'],F32),('b',['B','K','N'],F32)], [('y',F32)],
     ['--dim','B=1..3','--dim','K=1..9','--dim','N=1..9'], [dict(B=1,K=1,N=1),dict(B=3,K=4,N=7)],
     lambda s: [rnd(s['K']),rnd(s['B'],s['K'],s['N'])], lambda s,f: bind(s))
# ---- RMSNormalization (opset 23): f32 on the vector rows (codegen/c/emit_rows.c), f64 on the scalar loops ----
for t,dt in [(F32,np.float32),(TP.DOUBLE,np.float64)]:
    wr=nh.from_array((rng.random(6)+0.5).astype(dt),'wr')
    case(f'rmsnorm_{np.dtype(dt).name}', [h.make_node('RMSNormalization',['x','wr'],['y'],axis=-1,epsilon=1e-4)],
         [('x',['N','S',6],t)], [('y',t)], ['--dim','N=1..3','--dim','S=1..9'], [dict(N=1,S=1),dict(N=3,S=7),dict(N=2,S=9)],
         lambda s,dt=dt: [rnd(s['N'],s['S'],6).astype(dt)], lambda s,f: bind(s), opset=23, inits=[wr])
# ---- Resize ----
def rz(name, att, scales=None, sizes=None, roi=None, inputs_sizes=False, inputs_scales=False, extra=[], rng_=(2,12), sz_list=None):
    ins=[('x',['N','C','H','V'],F32)]
    names=['x','roi' if roi is not None else '','','']
    inits=[]
    if roi is not None:
        ins.append(('roi',[8],F32)); names[1]='roi'
    if scales is not None:
        names[2]='sc'
        if inputs_scales: ins.append(('sc',[len(scales)],F32))
        else: inits.append(nh.from_array(np.array(scales,np.float32),'sc'))
    if sizes is not None:
        names[3]='sz'
        if inputs_sizes: ins.append(('sz',[len(sizes)],TP.INT64))
        else: inits.append(nh.from_array(np.array(sizes,np.int64),'sz'))
    while names and names[-1]=='': names.pop()
    sl=sz_list or [dict(N=1,C=1,H=rng_[0],V=rng_[0]),dict(N=2,C=3,H=5,V=7),dict(N=1,C=2,H=rng_[1],V=rng_[1]-1)]
    def gen(s):
        a=[rnd(s['N'],s['C'],s['H'],s['V'])]
        if roi is not None: a.append(np.array(roi,np.float32))
        if inputs_scales: a.append(np.array(scales,np.float32))
        if inputs_sizes: a.append(np.array(sizes,np.int64))
        return a
    def stat(s, files):
        f=bind(s)
        for (n,_,_),fl in zip(ins,files):
            if n!='x': f+=['--const',f'{n}={fl}']
        return f
    case('resize_'+name, [h.make_node('Resize',names,['y'],**att)], ins, [('y',F32)],
         ['--dim','N=1..2','--dim','C=1..3','--dim',f'H={rng_[0]}..{rng_[1]}','--dim',f'V={rng_[0]}..{rng_[1]}','--max-elems','100000']+extra,
         sl, gen, stat, inits=inits)
rz('nearest2', dict(mode='nearest'), scales=[1,1,2,2])
rz('nearest_floor_asym', dict(mode='nearest',nearest_mode='floor',coordinate_transformation_mode='asymmetric'), scales=[1,1,0.6,1.7])
rz('linear_half', dict(mode='linear'), scales=[1,1,0.6,1.5])
rz('linear_align', dict(mode='linear',coordinate_transformation_mode='align_corners'), scales=[1,1,2.3,0.5])
rz('cubic_exclude', dict(mode='cubic',exclude_outside=1,cubic_coeff_a=-0.5), scales=[1,1,1.7,0.8])
rz('cubic_pytorch', dict(mode='cubic',coordinate_transformation_mode='pytorch_half_pixel'), scales=[1,1,3,0.34])
rz('linear_aa_in', dict(mode='linear',antialias=1), scales=[1,1,0.45,0.7], inputs_scales=True)
rz('cubic_aa_sizes_in', dict(mode='cubic',antialias=1,axes=[2,3]), sizes=[3,4], inputs_sizes=True, rng_=(3,12))
rz('sizes_notlarger_in', dict(mode='linear',axes=[3,2],keep_aspect_ratio_policy='not_larger'), sizes=[9,6], inputs_sizes=True)
rz('sizes_notsmaller', dict(mode='nearest',axes=[2,3],keep_aspect_ratio_policy='not_smaller'), sizes=[5,8])
rz('sizes_stretch', dict(mode='cubic',axes=[2,3]), sizes=[5,8])
rz('scales_in_symm', dict(mode='linear',coordinate_transformation_mode='half_pixel_symmetric'), scales=[1,1,1.6,0.75], inputs_scales=True)
rz('tfcrop_roi_in', dict(mode='linear',coordinate_transformation_mode='tf_crop_and_resize',extrapolation_value=-3.0), scales=[1,1,1.5,2], roi=[0,0,0.1,-0.2,1,1,0.8,1.3])
rz('tfcrop_nearest', dict(mode='nearest',coordinate_transformation_mode='tf_crop_and_resize'), sizes=[2,3,4,5], roi=[0,0,0.1,0.2,1,1,0.9,0.7], inputs_sizes=True)

# opsets 10, 11 and 13 (opset-10 rounding, tf_half_pixel_for_nn)
def rz_old(name, opset, att, scales):
    ins=[('x',['N','C','H','V'],F32),('sc',[4],F32)]
    names=['x','sc'] if opset<11 else ['x','','sc']
    def gen(s): return [rnd(s['N'],s['C'],s['H'],s['V']), np.array(scales,np.float32)]
    def stat(s, files): return bind(s)+['--const',f'sc={files[1]}']
    case('resize_'+name, [h.make_node('Resize',names,['y'],**att)], ins, [('y',F32)],
         ['--dim','N=1..2','--dim','C=1..3','--dim','H=2..12','--dim','V=2..12','--max-elems','100000'],
         [dict(N=1,C=1,H=3,V=3),dict(N=2,C=3,H=5,V=7),dict(N=1,C=2,H=12,V=11)], gen, stat, opset=opset)
rz_old('op10_nearest', 10, dict(mode='nearest'), [1,1,0.7,2.4])
rz_old('op10_linear', 10, dict(mode='linear'), [1,1,1.5,0.5])
rz_old('op11_tfnn', 11, dict(mode='nearest',coordinate_transformation_mode='tf_half_pixel_for_nn'), [1,1,1.5,0.6])
rz_old('op13_cubic', 13, dict(mode='cubic'), [1,1,1.25,3])
# u8 nearest, scales on N and C too
case('resize_u8', [h.make_node('Resize',['x','','sc'],['y'],mode='nearest')], [('x',['N','C','H'],TP.UINT8)], [('y',TP.UINT8)],
     ['--dim','N=1..3','--dim','C=1..3','--dim','H=1..9'], [dict(N=1,C=1,H=1),dict(N=3,C=2,H=9)],
     lambda s: [rng.integers(0,255,(s['N'],s['C'],s['H'])).astype(np.uint8)], lambda s,f: bind(s),
     inits=[nh.from_array(np.array([2,0.5,1.5],np.float32),'sc')])
# f16 linear (the sums in double, the value stored as f16), scales on H and W
case('resize_f16', [h.make_node('Resize',['x','','sc'],['y'],mode='linear')], [('x',['N','C','H','V'],TP.FLOAT16)], [('y',TP.FLOAT16)],
     ['--dim','N=1..2','--dim','C=1..3','--dim','H=2..9','--dim','V=2..9'], [dict(N=1,C=1,H=2,V=3),dict(N=2,C=3,H=9,V=7)],
     lambda s: [rnd(s['N'],s['C'],s['H'],s['V']).astype(np.float16)], lambda s,f: bind(s),
     inits=[nh.from_array(np.array([1,1,1.5,0.75],np.float32),'sc')])
# a chain: data dims of a Resize flow into the convolutions and pools after it
Wa=nh.from_array(rnd(4,3,3,3),'Wa'); Wb=nh.from_array(rnd(5,4,3,3),'Wb'); Gm=nh.from_array(rnd(5,6),'Gm'); Gb=nh.from_array(rnd(6),'Gb')
chain=[h.make_node('Conv',['x','Wa'],['c1'],auto_pad='SAME_UPPER',strides=[2,2]),
       h.make_node('Relu',['c1'],['r1']),
       h.make_node('MaxPool',['r1'],['p1'],kernel_shape=[2,2],strides=[2,2],ceil_mode=1),
       h.make_node('Resize',['p1','','','sz'],['z1'],mode='linear'),
       h.make_node('Conv',['z1','Wb'],['c2'],pads=[1,1,1,1]),
       h.make_node('GlobalAveragePool',['c2'],['g1']),
       h.make_node('Flatten',['g1'],['f1']),
       h.make_node('Gemm',['f1','Gm','Gb'],['y'])]
case('chain', chain, [('x',['N',3,'H','V'],F32),('sz',[4],TP.INT64)], [('y',F32)],
     ['--dim','N=1..2','--dim','H=4..40','--dim','V=4..40','--max-elems','1000000'],
     [dict(N=1,H=4,V=4),dict(N=2,H=23,V=17),dict(N=1,H=40,V=33)],
     lambda s: [rnd(s['N'],3,s['H'],s['V']), np.array([s['N'],4,s['H']//2+1,s['V']//3+2],np.int64)],
     lambda s,f: bind(s)+['--const',f'sz={f[1]}'], inits=[Wa,Wb,Gm,Gb], tol=1e-5)
print(f'rt_nn: {total} checks, {fails} failed')
sys.exit(1 if fails else 0)
