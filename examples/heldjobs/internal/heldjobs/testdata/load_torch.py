"""Load a held-job model directory's model_torch.npz into PyTorch, as
docs/heldjobs.md tells a user to, and print P(release) of some sequences.

    /usr/bin/python3 load_torch.py MODEL_DIR X.npz

The state_dict is loaded with strict=True; model_torch.json beside it gives
the module (lstm or gru) and whether the rows must be flipped on the time
axis (newest_first). X.npz holds x (B×T×I, float64). Prints one JSON
object: the torch version and prob, a list of B probabilities.
TestTorchStrict runs it and compares with Go's Model.Predict.
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, module, inputs, hidden, layers):
        super().__init__()
        self.module = module
        rnn = nn.GRU if module == "gru" else nn.LSTM
        setattr(self, module, rnn(inputs, hidden, layers, batch_first=True))
        self.fc = nn.Linear(hidden, 1)

    def forward(self, x):
        out, _ = getattr(self, self.module)(x)
        return torch.sigmoid(self.fc(out[:, -1, :])).squeeze(1)


model_dir, xfile = sys.argv[1], sys.argv[2]
with open(os.path.join(model_dir, "model_torch.json")) as f:
    framing = json.load(f)
state = {k: torch.from_numpy(v) for k, v in np.load(os.path.join(model_dir, "model_torch.npz")).items()}
m = framing["module"]
net = Net(m, state[m + ".weight_ih_l0"].shape[1], state[m + ".weight_hh_l0"].shape[1],
          sum(1 for k in state if k.startswith(m + ".weight_ih_l")))
net.load_state_dict(state, strict=True)
x = torch.from_numpy(np.load(xfile)["x"]).float()
with torch.no_grad():
    prob = net(torch.flip(x, [1]) if framing["newest_first"] else x)
print(json.dumps({"torch": torch.__version__, "prob": prob.tolist()}))
