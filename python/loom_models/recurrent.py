"""Recurrent models exported from PyTorch to ONNX (opset 17), with seeded random weights:

- lstm_lm: a word-level language model, the shape of PyTorch's word_language_model example:
  embedding (10000 words, 512) -> 2-layer LSTM (hidden 512) -> decoder to the 10000 words,
  over 35 tokens (the example's bptt), batch 1, batch-first;
- gru_classifier: a sequence classifier: embedding (5000 words, 128) -> bidirectional GRU
  (hidden 256) -> the two final hidden states -> 4 classes, over 64 tokens.
PyTorch exports the layers as ONNX LSTM / GRU nodes (time-first, with the weights
reordered to ONNX's gate order), wrapped in transposes. torch is imported only to export,
so that the input generators stay light.
"""

OPSET = 17

# name -> (vocabulary, tokens per input)
SIZES = {"lstm_lm": (10000, 35), "gru_classifier": (5000, 64)}


def token_shape(name):
    return (1, SIZES[name][1])


def vocabulary(name):
    return SIZES[name][0]


def build(name, seed=0):
    """The model `name` in eval mode with seeded weights."""
    import torch

    class LstmLanguageModel(torch.nn.Module):
        def __init__(self, words, hidden=512, layers=2):
            super().__init__()
            self.embedding = torch.nn.Embedding(words, hidden)
            self.lstm = torch.nn.LSTM(hidden, hidden, layers, batch_first=True)
            self.decoder = torch.nn.Linear(hidden, words)

        def forward(self, tokens):
            states, _ = self.lstm(self.embedding(tokens))
            return self.decoder(states)

    class GruClassifier(torch.nn.Module):
        def __init__(self, words, embedding=128, hidden=256, classes=4):
            super().__init__()
            self.embedding = torch.nn.Embedding(words, embedding)
            self.gru = torch.nn.GRU(embedding, hidden, batch_first=True, bidirectional=True)
            self.classifier = torch.nn.Linear(2 * hidden, classes)

        def forward(self, tokens):
            _, final = self.gru(self.embedding(tokens))  # [2, batch, hidden]
            return self.classifier(torch.cat([final[0], final[1]], dim=1))

    constructors = {"lstm_lm": LstmLanguageModel, "gru_classifier": GruClassifier}
    if name not in constructors:
        raise ValueError(f"unknown recurrent model '{name}'; known: {sorted(constructors)}")
    torch.manual_seed(seed)
    return constructors[name](vocabulary(name)).eval()


def export(name, path, seed=0):
    import torch
    model = build(name, seed)
    example = torch.randint(0, vocabulary(name), token_shape(name))
    with torch.no_grad():
        torch.onnx.export(model, (example,), path, input_names=["tokens"],
                          output_names=["logits"], opset_version=OPSET)
