"""torchvision classifiers with random weights, exported to ONNX (opset 13).

The weights are torchvision's own random initialization under a fixed seed. Freshly
initialized batch-norm layers hold mean 0 and variance 1, which makes them identities and
lets activations grow layer after layer; so the statistics are first calibrated on random
images (one forward pass in training mode, plain averaging) and the affine parameters are
perturbed. The exported model then normalizes like a trained one: activations stay O(1)
and batch norm is a real computation for the compiler to fold.
"""

import torch
import torchvision

# Constructors by the model names of `loom_models.generate`.
ARCHITECTURES = {
    "resnet18": torchvision.models.resnet18,
    "resnet50": torchvision.models.resnet50,
    "mobilenet_v2": torchvision.models.mobilenet_v2,
    "squeezenet": torchvision.models.squeezenet1_1,
    # Grouped 3x3 convolutions: 16 channels per group; 8 per group with squeeze-and-
    # excitation; 4 per group (32x4d).
    "regnet_x_400mf": torchvision.models.regnet_x_400mf,
    "regnet_y_400mf": torchvision.models.regnet_y_400mf,
    "resnext50_32x4d": torchvision.models.resnext50_32x4d,
    # Long chains of channel concatenation.
    "densenet121": torchvision.models.densenet121,
    # Squeeze-and-excitation with hard-swish.
    "mobilenet_v3_large": torchvision.models.mobilenet_v3_large,
}

IMAGE_SHAPE = (1, 3, 224, 224)
OPSET = 13
CALIBRATION_BATCH = 8


def build(name, seed=0):
    """The model `name` in eval mode, with seeded weights and calibrated batch norms."""
    if name not in ARCHITECTURES:
        raise ValueError(f"unknown torchvision model '{name}'; known: {sorted(ARCHITECTURES)}")
    torch.manual_seed(seed)
    model = ARCHITECTURES[name](weights=None)
    batch_norms = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    if batch_norms:
        for bn in batch_norms:
            bn.reset_running_stats()
            bn.momentum = None  # cumulative average: one pass sets the batch's statistics
            with torch.no_grad():
                bn.weight.uniform_(0.5, 1.5)
                bn.bias.normal_(0.0, 0.1)
        model.train()
        with torch.no_grad():
            model(torch.randn(CALIBRATION_BATCH, *IMAGE_SHAPE[1:]))
    model.eval()
    return model


def export(name, path, seed=0):
    """Writes model `name` to `path`: input "input" [1,3,224,224], output "logits" [1,1000]."""
    model = build(name, seed)
    example = torch.randn(*IMAGE_SHAPE)
    with torch.no_grad():
        torch.onnx.export(model, example, path, opset_version=OPSET, input_names=["input"],
                          output_names=["logits"], do_constant_folding=True)
