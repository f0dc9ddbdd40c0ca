"""Hostile input, generated at test time: repositories, archives, input-hygiene cases and toolchain attacks, one
module per kind; the names tests import are re-exported here (``from tests.hostile import make_suite``)."""

from __future__ import annotations

from tests.hostile.archives import (make_tar_big_member, make_tar_bz2_bomb, make_tar_links_and_devices,
                                    make_zip_links_and_budget, make_zip_slip)
from tests.hostile.cases import HostileCase, HygieneCase, PKG_A, PKG_B, SECRET, Suite, tree_digest
from tests.hostile.hygiene import (LINE_SEPARATORS, PKG_USES, make_clone_with_hostile_attributes, make_hygiene_suite,
                                   make_line_separators, make_pin_looks_like_option, make_pin_not_hex,
                                   make_signed_root_commit, make_unsafe_names)
from tests.hostile.languages import (CS_APP, CS_LIB, GO_BROKEN, GO_LIB, GO_MAIN, JAVA_APP, JAVA_CART,
                                     make_csharp_control, make_csharp_cr_injection, make_go_control,
                                     make_go_line_directives, make_java_control, make_java_cr_listfile)
from tests.hostile.processes import adopting_orphans, descendants, new_processes, toolchain_processes
from tests.hostile.repos import (make_big_file, make_binary_and_bad_encoding, make_deep_nesting, make_git_config_hooks,
                                 make_long_file, make_odd_names, make_outside, make_pylint_plugins, make_slow_file,
                                 make_suite, make_symlinks_to_etc, make_symlinks_to_parent, make_unresolvable_url)
from tests.hostile.toolchains import (HOSTILE_TSC, TOOLCHAIN_ATTACKS, hostile_tsc_package, make_annotation_processor,
                                      make_attack_repo, make_memory_bomb, make_stdlib_shadows)

__all__ = [
    "CS_APP", "CS_LIB", "GO_BROKEN", "GO_LIB", "GO_MAIN", "HOSTILE_TSC", "HostileCase", "HygieneCase", "JAVA_APP",
    "JAVA_CART", "LINE_SEPARATORS", "PKG_A", "PKG_B", "PKG_USES", "SECRET", "Suite", "TOOLCHAIN_ATTACKS",
    "adopting_orphans", "descendants", "new_processes",
    "hostile_tsc_package", "make_annotation_processor", "make_attack_repo", "make_big_file",
    "make_binary_and_bad_encoding", "make_clone_with_hostile_attributes", "make_csharp_control",
    "make_csharp_cr_injection", "make_deep_nesting", "make_git_config_hooks", "make_go_control",
    "make_go_line_directives", "make_hygiene_suite", "make_java_control", "make_java_cr_listfile",
    "make_line_separators", "make_long_file", "make_memory_bomb", "make_odd_names", "make_outside",
    "make_pin_looks_like_option", "make_pin_not_hex", "make_pylint_plugins", "make_signed_root_commit",
    "make_slow_file", "make_stdlib_shadows", "make_suite", "make_symlinks_to_etc", "make_symlinks_to_parent",
    "make_tar_big_member", "make_tar_bz2_bomb", "make_tar_links_and_devices", "make_unresolvable_url",
    "make_unsafe_names", "make_zip_links_and_budget", "make_zip_slip", "toolchain_processes", "tree_digest",
]
