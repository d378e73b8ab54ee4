"""The real exporters' zoo (issue 40): models as their real exporters make them
(Ultralytics, torch's two exporters, ONNX Runtime's quantizers), from configs
with seeded random weights, their PyTorch dumps, derived int8/fp16 copies and
planted faults. A test fixture, not part of parity.

common.py    inputs in their real ranges, BatchNorm statistics, faults, dumps
yolo.py      Ultralytics YOLOv8n (ultralytics is AGPL: tests only)
ultra.py     Ultralytics YOLOv8n-seg, YOLO11n, YOLO26n (issue 50)
vision.py    torchvision efficientnet_b0, mobilenet_v2, lraspp segmentation (issue 50)
trained.py   a classifier trained for seconds on synthetic images; the Cast-only edit
hf.py        transformers ViT / Llama decode step / Whisper encoder, timm, torchvision
derived.py   int8 QDQ / dynamic and fp16 copies, and the truth about them
groups.py    what each cache folder holds
cache.py     the cache (rebuilt only when a builder or a version changes)
cases.py     the cases: command, expected verdict, planted module
"""
