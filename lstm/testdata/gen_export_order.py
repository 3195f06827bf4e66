#!/usr/bin/python3
"""Golden for lstm.TestExportTorchKeepsOrder: runs the newest-first model
that Go exported (export_order_model.npz, float64) in PyTorch on the
sequences of export_order_data.npz, once flipping the time axis as
ExportTorch's doc says (prob) and once without (prob_unflipped). The .npz
is the state_dict alone, loaded with strict=True; the row order is read
from export_order_model.json beside it.

Run in lstm/testdata after LSTM_EXPORT_GOLDEN=1 go test -run ExportTorchKeepsOrder ./lstm/:
    /usr/bin/python3 gen_export_order.py > export_order_torch.json
"""
import json
import numpy as np
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, inputs, hidden, layers):
        super().__init__()
        self.lstm = nn.LSTM(inputs, hidden, layers, batch_first=True)
        self.fc = nn.Linear(hidden, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1, :]).squeeze(1)


d = dict(np.load("export_order_model.npz"))
with open("export_order_model.json") as f:
    newest_first = bool(json.load(f)["newest_first"])
hidden = d["lstm.weight_hh_l0"].shape[1]
inputs = d["lstm.weight_ih_l0"].shape[1]
layers = sum(1 for k in d if k.startswith("lstm.weight_ih_l"))
net = Net(inputs, hidden, layers).double()
net.load_state_dict({k: torch.from_numpy(v) for k, v in d.items()}, strict=True)
x = torch.from_numpy(np.load("export_order_data.npz")["x"])
with torch.no_grad():
    prob = torch.sigmoid(net(torch.flip(x, [1]) if newest_first else x)).numpy()
    unflipped = torch.sigmoid(net(x)).numpy()
print(json.dumps({"torch": torch.__version__, "numpy": np.__version__, "newest_first": newest_first,
                  "prob": prob.tolist(), "prob_unflipped": unflipped.tolist()}))
