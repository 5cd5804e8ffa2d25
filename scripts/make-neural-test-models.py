#!/usr/bin/env python3
"""Writes the small generated models in Tests/neural-models/generated/ (JSON only).

Each is built from its format's description, with random weights from a fixed seed, for the
architectures and options the example models of NeuralAmpModelerCore and RTNeural do not cover:
a NAM ConvNet with and without batch norm, NAM Linear (short, and long enough for the reference
engine's FFT path), a gated NAM 0.5 WaveNet, a WaveNet of the trainer's "nano" size, a two-layer
NAM LSTM, and AIDA-X files (an LSTM with in_skip and gains, a GRU with gains).

The reference outputs beside them are made by the reference engines, not here (see
Tests/neural-models/README.md). Running this again writes the same files.
"""

import json
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "Tests", "neural-models", "generated")


def weights(rng, count, scale):
    # Six decimals: short files, and both engines read the same float32 from the same text.
    return [round(rng.uniform(-scale, scale), 6) for _ in range(count)]


def nam_file(architecture, config, flat, name):
    return {
        "version": "0.5.4",
        "architecture": architecture,
        "config": config,
        "weights": flat,
        "sample_rate": 48000,
        "metadata": {"name": name, "modeled_by": "scripts/make-neural-test-models.py"},
    }


# NAM 0.5 WaveNet weights, in the order the format lists them: per layer array the input
# rechannel (1x1, no bias), per layer the dilated conv (kernel taps oldest first, then bias), the
# condition mixin (1x1, no bias) and the layer's 1x1 (with bias), then the head rechannel (bias if
# head_bias); at the end one head_scale. The input's weights are large and the biases small, so
# that a guitar's level moves the network rather than its biases.
def wavenet(rng, layers, name, scale, head_scale):
    flat = []
    for la in layers:
        ch, k = la["channels"], la["kernel_size"]
        mid = 2 * ch if la["gated"] else ch
        first = la["input_size"] == 1
        flat += weights(rng, ch * la["input_size"], 3.0 if first else scale)
        for _ in la["dilations"]:
            flat += weights(rng, mid * ch * k, scale) + weights(rng, mid, 0.05)
            flat += weights(rng, mid * la["condition_size"], 3.0)
            flat += weights(rng, ch * ch, scale) + weights(rng, ch, 0.05)
        flat += weights(rng, la["head_size"] * ch, scale)
        flat += weights(rng, la["head_size"], 0.05) if la["head_bias"] else []
    flat.append(head_scale)
    return nam_file("WaveNet", {"layers": layers, "head": None, "head_scale": head_scale}, flat, name)


def layer_array(input_size, channels, head_size, dilations, gated, head_bias, activation="Tanh", kernel_size=3):
    return {
        "input_size": input_size, "condition_size": 1, "head_size": head_size, "channels": channels,
        "kernel_size": kernel_size, "dilations": dilations, "activation": activation,
        "gated": gated, "head_bias": head_bias,
    }


# NAM ConvNet: per block a kernel-2 dilated conv (bias only without batch norm), then with batch
# norm its running mean, running variance, weight, bias (channels each) and eps; then the head,
# channels weights and one bias.
def convnet(rng, channels, dilations, batchnorm, activation, name, scale):
    flat = []
    for i, _ in enumerate(dilations):
        fan_in = 1 if i == 0 else channels
        flat += weights(rng, channels * fan_in * 2, 4.0 if i == 0 else scale)
        if batchnorm:
            flat += weights(rng, channels, 0.02)                                  # running mean
            flat += [round(rng.uniform(0.5, 2.0), 6) for _ in range(channels)]    # running variance > 0
            flat += [round(rng.uniform(0.5, 1.5), 6) for _ in range(channels)]    # weight
            flat += weights(rng, channels, 0.02)                                  # bias
            flat += [1e-5]                                                        # eps
        else:
            flat += weights(rng, channels, 0.02)
    flat += weights(rng, channels, scale) + weights(rng, 1, 0.02)
    config = {"channels": channels, "dilations": dilations, "batchnorm": batchnorm, "activation": activation}
    return nam_file("ConvNet", config, flat, name)


def linear(rng, receptive_field, bias, name):
    # A decaying impulse response, like a small cabinet, so the output stays in range.
    flat = [round(rng.uniform(-1, 1) * math.exp(-i / (receptive_field / 4)) * 0.5, 6) for i in range(receptive_field)]
    if bias:
        flat.append(0.01)
    return nam_file("Linear", {"receptive_field": receptive_field, "bias": bias}, flat, name)


# NAM LSTM: per layer W (4*hidden rows of input+hidden, row-major, gates i f g o), b (4*hidden),
# the initial hidden state and the initial cell state (hidden each); then the head: hidden
# weights and one bias.
def nam_lstm(rng, hidden, num_layers, name, scale):
    flat = []
    for layer in range(num_layers):
        inputs = 1 if layer == 0 else hidden
        for _ in range(4 * hidden):
            flat += weights(rng, inputs, 3.0 if layer == 0 else scale) + weights(rng, hidden, scale)
        flat += weights(rng, 4 * hidden, 0.05)
        flat += weights(rng, 2 * hidden, 0.1)
    flat += weights(rng, hidden + 1, scale)
    return nam_file("LSTM", {"input_size": 1, "hidden_size": hidden, "num_layers": num_layers}, flat, name)


def matrix(rng, rows, cols, scale):
    return [weights(rng, cols, scale) for _ in range(rows)]


# RTNeural's Keras JSON, as AIDA-X files are: a recurrent layer (Keras order: kernel
# [inputs][gates*hidden], recurrent kernel [hidden][gates*hidden], bias; GRU with two bias rows,
# reset_after) and a dense layer to one output ([hidden][1], bias [1]).
def aidax(rng, kind, hidden, scale, extra):
    gates = 4 if kind == "lstm" else 3
    bias = weights(rng, gates * hidden, 0.05) if kind == "lstm" else matrix(rng, 2, gates * hidden, 0.05)
    model = {
        "in_shape": [None, None, 1],
        "layers": [
            {"type": kind, "activation": "", "shape": [None, None, hidden],
             "weights": [matrix(rng, 1, gates * hidden, 3.0), matrix(rng, hidden, gates * hidden, scale), bias]},
            {"type": "dense", "activation": "", "shape": [None, None, 1],
             "weights": [matrix(rng, hidden, 1, scale), weights(rng, 1, 0.02)]},
        ],
    }
    model.update(extra)
    return model


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = random.Random(39)
    nano = [
        layer_array(1, 4, 2, [1, 2, 4, 8, 16, 32, 64], False, False),
        layer_array(4, 2, 1, [128, 256, 512, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512], False, True),
    ]
    gated = [
        layer_array(1, 3, 2, [1, 2, 4, 8], True, False),
        layer_array(3, 2, 1, [16, 32], True, True),
    ]
    files = {
        "nam_convnet.nam": convnet(rng, 4, [1, 2, 4, 8, 16], False, "Tanh", "generated ConvNet", 0.6),
        "nam_convnet_batchnorm.nam": convnet(rng, 4, [1, 2, 4, 8, 16], True, "Tanh", "generated ConvNet with batch norm", 0.6),
        "nam_linear.nam": linear(rng, 48, True, "generated Linear, 48 taps"),
        "nam_linear_long.nam": linear(rng, 1000, False, "generated Linear, 1000 taps (reference engine: FFT path)"),
        "nam_wavenet_gated.nam": wavenet(rng, gated, "generated gated WaveNet", 0.5, 0.3),
        "nam_wavenet_nano.nam": wavenet(rng, nano, "generated nano WaveNet (trainer's NANO layout)", 0.5, 0.3),
        "nam_lstm_2layer.nam": nam_lstm(rng, 4, 2, "generated two-layer LSTM", 0.6),
        "aidax_lstm_skip.json": aidax(rng, "lstm", 8, 0.5, {"in_skip": 1, "in_gain": 6.0, "out_gain": -3.0}),
        "aidax_gru.json": aidax(rng, "gru", 8, 0.5, {"in_gain": -2.0, "out_gain": 4.0}),
        # Last, so that adding it left the files above as they were.
        "nam_lstm_standard.nam": nam_lstm(rng, 24, 1, "generated LSTM in the trainer's STANDARD size (hidden 24, one layer)", 0.3),
    }
    for name, content in files.items():
        with open(os.path.join(OUT, name), "w") as f:
            json.dump(content, f, separators=(",", ":"))
            f.write("\n")
        print(name)


if __name__ == "__main__":
    main()
