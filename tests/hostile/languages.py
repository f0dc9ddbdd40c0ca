"""Input-hygiene cases for the compiled languages: a normal C#, Java and Go repository each, and the same with a
file name that a toolchain's list syntax would read differently, or with ``//line`` directives."""

from __future__ import annotations

import os
from pathlib import Path

from benchsmith.records import Reason
from tests.hostile.cases import SECRET, HygieneCase

CS_LIB = """namespace Shop.Lib
{
    public class Cart
    {
        public int Total(int[] xs) { int s = 0; foreach (var x in xs) s += x; return s; }
        public static Cart Make() { return new Cart(); }
    }
}
"""
CS_APP = """using Shop.Lib;

namespace Shop.App
{
    public class Program
    {
        public static int Run()
        {
            var cart = Cart.Make();
            int n = cart.Total(new int[] { 1, 2, 3 });
            return n;
        }
    }
}
"""
JAVA_CART = """package shop.lib;

public class Cart {
    public int total(int[] xs) {
        int s = 0;
        for (int x : xs) {
            s += x;
        }
        return s;
    }

    public static Cart make() {
        return new Cart();
    }
}
"""
JAVA_APP = """package shop.app;

import shop.lib.Cart;

public class App {
    public static int run() {
        Cart cart = Cart.make();
        int n = cart.total(new int[] {1, 2, 3});
        return n;
    }
}
"""


def make_csharp_control(root: Path) -> HygieneCase:
    repo = root / "cs_control"
    repo.mkdir()
    (repo / "Lib.cs").write_text(CS_LIB)
    (repo / "App.cs").write_text(CS_APP)
    return HygieneCase("cs_control", str(repo), "csharp", examples_from={"App.cs": 1})


def make_csharp_cr_injection(root: Path) -> HygieneCase:
    """A directory named ``Lib.cs\\r-out:`` + the absolute path of a directory outside: in mcs's response file the
    \\r ends the line, so the rest became ``-out:<outside>/EVIL.cs`` and mcs wrote its DLL there."""
    repo = root / "cs_cr_inject"
    repo.mkdir()
    (repo / "Lib.cs").write_text(CS_LIB)
    (repo / "App.cs").write_text(CS_APP)
    target = root / "cs_outside"
    target.mkdir()
    evil_dir = Path(str(repo / "Lib.cs") + "\r-out:" + str(target))
    evil_dir.mkdir(parents=True)
    (evil_dir / "EVIL.cs").write_text("namespace Evil { public class E {} }\n")
    rel = os.path.relpath(evil_dir / "EVIL.cs", repo)
    return HygieneCase("cs_cr_inject", str(repo), "csharp", items={f"cs_cr_inject/{rel}": Reason.UNSAFE_FILE_NAME},
                       markers=[target / "EVIL.cs", target / 'EVIL.cs"'], examples_from={"App.cs": 1})


def make_java_control(root: Path, name: str = "java_control") -> HygieneCase:
    repo = root / name
    (repo / "shop" / "lib").mkdir(parents=True)
    (repo / "shop" / "app").mkdir(parents=True)
    (repo / "shop" / "lib" / "Cart.java").write_text(JAVA_CART)
    (repo / "shop" / "app" / "App.java").write_text(JAVA_APP)
    return HygieneCase(name, str(repo), "java", examples_from={"shop/app/App.java": 1})


def make_java_cr_listfile(root: Path, outside: Path) -> HygieneCase:
    """``App.java\\r`` + an absolute path: the javac driver's file list (one name per line, and Java's readLine
    ends a line at \\r) would name a file outside the repository."""
    case = make_java_control(root, "java_cr")
    repo = Path(case.source)
    secret = outside / "Secret.java"
    secret.write_text(f'package shop.app;\npublic class Secret {{ String s = "{SECRET.strip()}"; '
                      f"int n = shop.lib.Cart.make().total(null); }}\n")
    evil_dir = Path(str(repo / "shop" / "app" / "App.java") + "\r" + str(outside))
    evil_dir.mkdir(parents=True)
    (evil_dir / "Secret.java").write_text(secret.read_text())
    rel = os.path.relpath(evil_dir / "Secret.java", repo)
    return HygieneCase("java_cr", str(repo), "java", items={f"java_cr/{rel}": Reason.UNSAFE_FILE_NAME},
                       examples_from={"shop/app/App.java": 1})


GO_LIB = """package lib

func Total(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

func NewBox() int { return 3 }
"""
GO_MAIN = """package main

import (
	"fmt"

	"example.com/m/lib"
)

//line generated.y:100
func main() {
	box := lib.NewBox()
	/*line other.go:7:3*/ n := lib.Total([]int{1, 2})
	fmt.Println(box, n, "//line in a string:1")
}
"""
GO_BROKEN = """package main

//line fake.go:500
func broken( {
}
"""


def make_go_control(root: Path) -> HygieneCase:
    repo = root / "go_control"
    (repo / "lib").mkdir(parents=True)
    (repo / "go.mod").write_text("module example.com/m\n\ngo 1.18\n")
    (repo / "lib" / "lib.go").write_text(GO_LIB)
    (repo / "main.go").write_text("\n".join(ln for ln in GO_MAIN.splitlines() if not ln.startswith("//line"))
                                  .replace("/*line other.go:7:3*/ ", "") + "\n")
    return HygieneCase("go_control", str(repo), "go", examples_from={"main.go": 2})


def make_go_line_directives(root: Path) -> HygieneCase:
    """``//line`` and ``/*line`` directives before the uses, and before a syntax error: positions (and the
    error's line) are the file's own."""
    repo = root / "go_line"
    (repo / "lib").mkdir(parents=True)
    (repo / "go.mod").write_text("module example.com/m\n\ngo 1.18\n")
    (repo / "lib" / "lib.go").write_text(GO_LIB)
    (repo / "main.go").write_text(GO_MAIN)
    (repo / "broken.go").write_text(GO_BROKEN)
    return HygieneCase("go_line", str(repo), "go", items={"go_line/broken.go": Reason.SYNTAX_ERROR},
                       examples_from={"main.go": 2})
