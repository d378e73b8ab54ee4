"""torchvision models of issue 50's families, from their builders with seeded
random weights (weights=None, weights_backbone=None: nothing is downloaded),
BatchNorm statistics measured on [0, 1] images:

    efficientnet_b0     SE blocks, SiLU, 96x96
    mobilenet_v2        inverted residuals, ReLU6, 96x96
    lraspp              lraspp_mobilenet_v3_large: segmentation head (SE, Hardswish,
                        a pooled scale branch, bilinear upsampling), 128x128, 6 classes

and the deep conv each family's planted fault scales (x1.05): with eval
BatchNorm folded into its Conv, the exporters name the fused node after the
Conv2dNormActivation block (its `.0` conv or its `.1` BatchNorm), so the
planted module is the block.
"""

import torch

from .common import calibrate_batchnorm, images

CLASSIFIER_SIZE = 96
SEGMENT_SIZE = 128
SEGMENT_CLASSES = 6

# planted faults: (the conv scaled, the module a verdict must name: the block holding conv + BatchNorm)
EFFICIENTNET_FAULT = ("features.6.1.block.1.0", "features.6.1.block.1")   # a depthwise 5x5 conv of stage 6
MOBILENET_V2_FAULT = ("features.13.conv.1.0", "features.13.conv.1")       # a depthwise 3x3 conv of block 13
LRASPP_FAULT = ("model.backbone.12.block.1.0", "model.backbone.12.block.1")  # a backbone depthwise conv


def efficientnet_b0():
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.efficientnet_b0(weights=None, num_classes=100)
    calibrate_batchnorm(model, [images(4, CLASSIFIER_SIZE, seed=10 + k) for k in range(3)])
    return model, (images(1, CLASSIFIER_SIZE, seed=0),)


def mobilenet_v2():
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.mobilenet_v2(weights=None, num_classes=100)
    calibrate_batchnorm(model, [images(4, CLASSIFIER_SIZE, seed=10 + k) for k in range(3)])
    return model, (images(1, CLASSIFIER_SIZE, seed=0),)


class Segmenter(torch.nn.Module):
    """images -> the `out` map [B, classes, H, W]: the one-line adapter an
    export of a torchvision segmentation model needs (its forward returns a
    dict). Paths gain `model.`."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, images):
        return self.model(images)["out"]


def lraspp():
    import torchvision
    torch.manual_seed(0)
    m = torchvision.models.segmentation.lraspp_mobilenet_v3_large(
        weights=None, weights_backbone=None, num_classes=SEGMENT_CLASSES)
    model = Segmenter(m)
    calibrate_batchnorm(model, [images(2, SEGMENT_SIZE, seed=10 + k) for k in range(3)])
    return model, (images(1, SEGMENT_SIZE, seed=0),)
