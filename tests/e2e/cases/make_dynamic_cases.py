#!/usr/bin/python3
"""make_dynamic_cases.py: cases for the ops whose output size depends on the data
(NonMaxSuppression, Unique), beyond the backend suite: dtypes, NaN, axes,
omitted outputs, limits. Expected outputs: numpy.unique and a Python port of
ONNX Runtime's NonMaxSuppression (onnx 1.12 has no reference evaluator).
Writes tests/e2e/cases/local/test_{nm,uq}_*; run with /usr/bin/python3."""
import numpy as np, onnx, os, shutil
from onnx import helper as h, numpy_helper as nh, TensorProto as TP
root=os.path.join(os.path.dirname(os.path.abspath(__file__)), 'local')
[shutil.rmtree(os.path.join(root, d)) for d in (os.listdir(root) if os.path.isdir(root) else []) if d.startswith(('test_nm_', 'test_uq_'))]
def save(name, node, ins, outs, opset=11, inits=()):
    d=f'{root}/test_{name}'; os.makedirs(d+'/test_data_set_0')
    gi=[h.make_tensor_value_info(n, onnx.helper.np_dtype_to_tensor_dtype(a.dtype) if hasattr(onnx.helper,'np_dtype_to_tensor_dtype') else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], a.shape) for n,a in ins]
    go=[h.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], None) for n,a in outs]
    g=h.make_graph([node], name, gi, go, initializer=list(inits))
    m=h.make_model(g, opset_imports=[h.make_opsetid('',opset)])
    onnx.save(m, d+'/model.onnx')
    for i,(n,a) in enumerate(ins):
        open(f'{d}/test_data_set_0/input_{i}.pb','wb').write(nh.from_array(a,n).SerializeToString())
    for i,(n,a) in enumerate(outs):
        open(f'{d}/test_data_set_0/output_{i}.pb','wb').write(nh.from_array(a,n).SerializeToString())

def uref(x, sorted_, axis):
    y, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    inv = inv.reshape(-1)
    if not sorted_:
        order = np.argsort(idx, kind='stable')
        rank = np.empty_like(order); rank[order]=np.arange(len(order))
        idx=idx[order]; cnt=cnt[order]; inv=rank[inv]
        y = np.take(x.reshape(-1) if axis is None else x, idx, axis=0 if axis is None else axis)
    return y, idx.astype(np.int64), inv.astype(np.int64), cnt.astype(np.int64)

rng=np.random.default_rng(1)
def unique_case(name, x, sorted_=1, axis=None, outs=('Y','indices','inverse_indices','counts')):
    attrs={'sorted':sorted_}
    if axis is not None: attrs['axis']=axis
    r=dict(zip(['Y','indices','inverse_indices','counts'], uref(x, sorted_, axis)))
    full=['Y','indices','inverse_indices','counts']
    nodeouts=[o if o in outs else '' for o in full]
    while nodeouts and nodeouts[-1]=='': nodeouts.pop()
    node=h.make_node('Unique',['X'],nodeouts,**attrs)
    save(name,node,[('X',x)],[(o,r[o]) for o in full if o in outs])

unique_case('uq_int_unsorted', rng.integers(0,5,size=(20,)).astype(np.int64), 0)
unique_case('uq_i32_sorted', rng.integers(-3,3,size=(3,4)).astype(np.int32), 1)
unique_case('uq_nan', np.array([2.0,np.nan,1.0,np.nan,2.0,-1.0],np.float32), 1)
unique_case('uq_axis1_unsorted', rng.integers(0,2,size=(2,6,3)).astype(np.float32), 0, 1)
unique_case('uq_axis0_sorted_i8', rng.integers(0,2,size=(7,2)).astype(np.int8), 1, 0)
unique_case('uq_axis2', rng.integers(0,2,size=(2,2,9)).astype(np.float64), 1, -1)
unique_case('uq_f16', rng.integers(0,4,size=(10,)).astype(np.float16), 1)
unique_case('uq_only_y', rng.integers(0,4,size=(10,)).astype(np.float32), 1, outs=('Y',))
unique_case('uq_y_inv', rng.integers(0,4,size=(10,)).astype(np.float32), 0, outs=('Y','inverse_indices'))
unique_case('uq_bool', np.array([True,False,True]), 1)
unique_case('uq_big', rng.integers(0,300,size=(5000,)).astype(np.int64), 0)

# NMS reference (onnxruntime's algorithm)
def nms_ref(boxes, scores, maxout, iou, sthr, center):
    out=[]
    B,N,_=boxes.shape; C=scores.shape[1]
    def corners(b):
        if center:
            xc,yc,w,hh=[np.float32(v) for v in b]
            return yc-hh/np.float32(2), xc-w/np.float32(2), yc+hh/np.float32(2), xc+w/np.float32(2)
        y1,x1,y2,x2=[np.float32(v) for v in b]
        return min(y1,y2),min(x1,x2),max(y1,y2),max(x1,x2)
    def supp(a,b):
        ay0,ax0,ay1,ax1=corners(a); by0,bx0,by1,bx1=corners(b)
        ih=max(np.float32(0),min(ay1,by1)-max(ay0,by0)); iw=max(np.float32(0),min(ax1,bx1)-max(ax0,bx0))
        inter=np.float32(ih*iw)
        if inter<=0: return False
        aa=np.float32((ay1-ay0)*(ax1-ax0)); ab=np.float32((by1-by0)*(bx1-bx0)); un=np.float32(aa+ab-inter)
        if aa<=0 or ab<=0 or un<=0: return False
        return np.float32(inter/un) > np.float32(iou)
    for b in range(B):
        for c in range(C):
            cand=[i for i in range(N) if sthr is None or scores[b,c,i]>np.float32(sthr)]
            cand.sort(key=lambda i:(-scores[b,c,i],i))
            kept=[]
            for i in cand:
                if len(kept)>=maxout: break
                if any(supp(boxes[b,k],boxes[b,i]) for k in kept): continue
                kept.append(i); out.append([b,c,i])
    return np.array(out,np.int64).reshape(-1,3)

def nms_case(name, B,C,N, maxout, iou, sthr, center=0, opset=11, dt=np.float32, scale=10):
    boxes=(rng.random((B,N,4))*scale).astype(dt)
    if center: boxes[...,2:]=np.abs(boxes[...,2:])
    scores=rng.random((B,C,N)).astype(dt)
    scores[...,1:N//2]=scores[...,N//2+1:N//2+N//2]  # some ties
    ins=[('boxes',boxes),('scores',scores)]; names=['boxes','scores']
    inits=[]
    if maxout is not None:
        ins.append(('max_output_boxes_per_class',np.array([maxout],np.int64))); names.append('max_output_boxes_per_class')
    else: names.append('')
    if iou is not None:
        ins.append(('iou_threshold',np.array([iou],np.float32))); names.append('iou_threshold')
    else: names.append('')
    if sthr is not None:
        ins.append(('score_threshold',np.array([sthr],np.float32))); names.append('score_threshold')
    while names[-1]=='': names.pop()
    node=h.make_node('NonMaxSuppression',names,['selected_indices'],center_point_box=center)
    ref=nms_ref(boxes.astype(np.float32) if dt!=np.float64 else boxes, scores, 0 if maxout is None else max(maxout,0), 0.0 if iou is None else iou, sthr, center)
    save(name,node,ins,[('selected_indices',ref)],opset=opset)

nms_case('nm_big', 2,3,200, 20, 0.3, 0.2)
nms_case('nm_center_op10', 1,2,50, 100, 0.5, None, center=1, opset=10)
nms_case('nm_no_iou', 1,1,30, 5, None, None)
nms_case('nm_zero', 1,1,10, 0, 0.5, None)
nms_case('nm_none', 1,1,10, None, 0.5, None)
nms_case('nm_neg', 1,1,10, -2, 0.5, None)
nms_case('nm_f16', 1,2,40, 7, 0.4, 0.1, dt=np.float16)
nms_case('nm_small_boxes', 2,2,300, 1000, 0.6, 0.5, scale=100)
