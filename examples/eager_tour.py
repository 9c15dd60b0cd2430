"""A short tour of eager jtorch, written exactly as torch code."""

import jtorch as torch

torch.manual_seed(0)
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print("x =", x)
print("x * 2 + 1 =", x * 2 + 1)
print("exp(x) =", torch.exp(x))
print("sigmoid(x - 3) =", torch.sigmoid(x - 3))
print("x.T =", x.T)
print("x.sum(dim=1) =", x.sum(dim=1))
print("softmax(x, dim=1) =", torch.softmax(x, dim=1))
print("int promotion:", torch.tensor([1, 2], dtype=torch.int32) + 1.5)
r = torch.randn(2, 3)
print("randn(2, 3) =", r)
print("r[r > 0] =", r[r > 0])
print("cat =", torch.cat([x, r], dim=0).shape)
