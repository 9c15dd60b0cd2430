"""Train a LeNet-style CNN on handwritten digits with jtorch, written exactly as torch code.

The data is the UCI digits set (1797 8x8 images) shipped with jtorch. The script trains with
Adam and a cosine learning-rate schedule, shows a progress bar with loss and accuracy, saves the model, loads it into a fresh
model and evaluates it again.

With ``--compile`` it trains ``torch.compile(model)`` instead, then times warm training steps
of the eager and the compiled model side by side. ``--device cuda`` trains on the GPU (the
batches pinned and copied without blocking), as torch code does.

Run:  python examples/demo.py [--epochs 15] [--out digits_cnn.pt] [--compile [--time-steps 20]]
      [--device cpu|cuda]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import jtorch as torch
import jtorch.nn as nn
import jtorch.nn.functional as F
from jtorch._datasets import load_digits
from jtorch.utils.data import DataLoader, TensorDataset, random_split

try:
    from tqdm import tqdm
except ImportError:  # the progress bar is optional
    tqdm = None


class LeNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(32 * 2 * 2, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))


def loaders(batch_size: int = 64, seed: int = 0, pin_memory: bool = False) -> tuple:
    images, labels = load_digits()
    data = TensorDataset(torch.from_numpy(images), torch.from_numpy(labels))
    g = torch.Generator().manual_seed(seed)
    train, test = random_split(data, [0.8, 0.2], generator=g)
    return (DataLoader(train, batch_size=batch_size, shuffle=True, generator=g,
                       pin_memory=pin_memory),
            DataLoader(test, batch_size=256, pin_memory=pin_memory))


@torch.no_grad()
def evaluate(model: nn.Module, loader, device: str = "cpu") -> float:
    model.eval()
    correct = total = 0
    for x, y in loader:
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        correct += (model(x).argmax(1) == y).sum().item()
        total += y.numel()
    return correct / total


def train(epochs: int = 15, lr: float = 1e-2, seed: int = 0, progress: bool = True,
          compile: bool = False, device: str = "cpu") -> tuple:
    """Train; return (model, test accuracy, mean step time in seconds). With ``compile`` the
    steps and the evaluations run ``torch.compile(model)``; the model returned is the module
    itself (the compiled one shares its parameters), so its state_dict has the plain keys."""
    torch.manual_seed(seed)
    train_loader, test_loader = loaders(seed=seed, pin_memory=device != "cpu")
    net = LeNet().to(device)
    model = torch.compile(net) if compile else net
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    steps, step_time, acc = 0, 0.0, 0.0
    for epoch in range(epochs):
        model.train()
        batches = train_loader
        bar = None
        if progress and tqdm is not None:
            bar = batches = tqdm(train_loader, desc=f"epoch {epoch + 1}/{epochs}", leave=False,
                                 file=sys.stdout)
        running, seen = 0.0, 0
        for x, y in batches:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            t0 = time.perf_counter()
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            step_time += time.perf_counter() - t0
            steps += 1
            running += loss.item() * y.numel()
            seen += y.numel()
            if bar is not None:
                bar.set_postfix(loss=f"{running / seen:.4f}")
        sched.step()
        acc = evaluate(model, test_loader, device)
        if progress:
            print(f"epoch {epoch + 1:2d}  train loss {running / seen:.4f}  test accuracy "
                  f"{acc:.2%}")
    return net, acc, step_time / max(steps, 1)


def step_times(steps: int = 20, batch_size: int = 64, seed: int = 0) -> tuple:
    """Median seconds of a warm training step (zero_grad, forward, loss, backward, Adam step)
    of the eager and the compiled LeNet: (eager, compiled). Both start from the same weights
    and see the same batch; each is warmed up first (the compiled one compiles on its first
    call), then their steps alternate, so a slow moment of a busy machine hits both."""
    images, labels = load_digits()
    x = torch.from_numpy(images[:batch_size])
    y = torch.from_numpy(labels[:batch_size])

    def make_step(compiled: bool):
        torch.manual_seed(seed)
        net = LeNet()
        model = torch.compile(net) if compiled else net
        opt = torch.optim.Adam(net.parameters(), lr=1e-2)

        def step() -> float:
            t0 = time.perf_counter()
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return time.perf_counter() - t0

        return step

    eager, compiled = make_step(False), make_step(True)
    for _ in range(3):
        eager(), compiled()
    pairs = [(eager(), compiled()) for _ in range(steps)]
    return statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)


def main(argv: list | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "digits_cnn.pt"))
    parser.add_argument("--compile", action="store_true",
                        help="train torch.compile(model), then time eager and compiled steps")
    parser.add_argument("--time-steps", type=int, default=20,
                        help="warm steps timed per model for the side-by-side (with --compile)")
    parser.add_argument("--device", default="cpu", help="where to train: cpu or cuda")
    args = parser.parse_args(argv)
    mode = "compiled with torch.compile" if args.compile else "eager"
    print(f"jtorch {torch.__version__}: LeNet on the digits set (1797 8x8 images), {mode}, "
          f"on {args.device}")
    model, acc, step = train(args.epochs, compile=args.compile, device=args.device)
    model = model.cpu()
    print(f"test accuracy {acc:.2%}   (mean training step {step * 1e3:.2f} ms, batch 64)")
    torch.save(model.state_dict(), args.out)
    fresh = LeNet()
    fresh.load_state_dict(torch.load(args.out))
    _, test_loader = loaders()
    acc2 = evaluate(fresh, test_loader)
    print(f"saved to {args.out}, reloaded: test accuracy {acc2:.2%}")
    if abs(acc2 - acc) > 1e-12:
        raise SystemExit("the reloaded model disagrees with the trained one")
    if args.compile:
        eager, compiled = step_times(args.time_steps)
        print(f"step time (batch 64, median of {args.time_steps} warm steps): "
              f"eager {eager * 1e3:.2f} ms | compiled {compiled * 1e3:.2f} ms | "
              f"compiled/eager {compiled / eager:.2f}")


if __name__ == "__main__":
    main()
