"""torchvision's SSDlite320 (mobilenet_v3_large backbone) with its NMS
post-processing inside the export: boxes, scores, labels of the kept
detections. weights=None, weights_backbone=None; BatchNorm statistics
measured on [0, 1] images; class logits spread as a trained detector's (a
fresh head scores every class 1/num_classes: ties that NMS orders at will)."""

import torch

from .common import calibrate_batchnorm, images

SIZE = 320
CLASSES = 10


class Detections(torch.nn.Module):
    """images [1, 3, H, W] in [0, 1] -> (boxes [N, 4], scores [N], labels [N]):
    the one-line adapter every export of a torchvision detector needs (its
    forward takes a list of images and returns a list of dicts). Paths gain
    `detector.`."""

    def __init__(self, detector):
        super().__init__()
        self.detector = detector

    def forward(self, images):
        d = self.detector([images[0]])[0]
        return d["boxes"], d["scores"], d["labels"]


class _Features(torch.nn.Module):
    def __init__(self, detector):
        super().__init__()
        self.detector = detector

    def forward(self, x):
        batch, _ = self.detector.transform(list(x))
        return self.detector.backbone(batch.tensors)


def ssdlite():
    import torchvision
    torch.manual_seed(0)
    m = torchvision.models.detection.ssdlite320_mobilenet_v3_large(
        weights=None, weights_backbone=None, num_classes=CLASSES, detections_per_img=20).eval()
    calibrate_batchnorm(_Features(m), [images(2, SIZE, seed=10 + k) for k in range(2)])
    _spread_classes(m)
    return Detections(m).eval(), (images(1, SIZE, seed=0),)


def _spread_classes(m, std=1.0):
    """Scales the classification head's last convs to logits of std `std`."""
    head = m.head.classification_head.module_list
    feats = _Features(m)
    with torch.no_grad():
        maps = list(feats(images(1, SIZE, seed=7)).values())
        for block, x in zip(head, maps):
            conv = block[-1] if isinstance(block, torch.nn.Sequential) else block
            spread = float(block(x).std())
            conv.weight.mul_(std / max(spread, 1e-12))
            if conv.bias is not None:
                conv.bias.mul_(std / max(spread, 1e-12))
