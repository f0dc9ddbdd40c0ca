"""Why and where an item left a pipeline: ``Stage`` and ``Reason``, the stable strings written to
``excluded.jsonl`` and counted in ``stats.json`` (re-exported by ``benchsmith.records``)."""

from __future__ import annotations

from benchsmith.enums import StrEnum


class Stage(StrEnum):
    """Pipeline stage that produced an exclusion."""

    SOURCE = "source"
    REPO_FILTER = "repo_filter"
    ANALYZER = "analyzer"
    EXAMPLE_BUILDER = "example_builder"
    EXAMPLE_FILTER = "example_filter"
    RETRIEVAL = "retrieval"  # builders/cceval/steps.py Retrieve (drops nothing today)
    SCREEN = "screen"
    SAMPLE = "sample"  # --max-per-repo
    VALIDATION = "validation"  # HumanExtension: a pair's reference (or a variant's) fails its tests
    RENDER = "render"  # HumanExtension: a pair whose prompt variants cannot be made


class Reason(StrEnum):
    """Why an item was dropped.  Stable strings: they are written to excluded.jsonl and counted in stats.json."""

    # sources / checkout
    CLONE_FAILED = "clone_failed"
    ARCHIVE_UNSAFE = "archive_unsafe"
    ARCHIVE_INVALID = "archive_invalid"
    SOURCE_NOT_FOUND = "source_not_found"
    COMMIT_INVALID = "commit_invalid"  # a pinned commit that is not a hex object name (``URL@--upload-pack=...``)
    # a work tree's git metadata not read (a .git file pointing elsewhere, a FIFO, a link, an include); the
    # repository is built as a plain directory, without commit or creation date
    GIT_METADATA_REFUSED = "git_metadata_refused"
    PATH_TOO_LONG = "path_too_long"  # a file or directory whose path the system cannot open (PATH_MAX)
    UNREADABLE_PATH = "unreadable_path"  # a directory that could not be listed (permissions, I/O error)
    # archive members that were not extracted (the rest of the archive was)
    ARCHIVE_MEMBER_TOO_LARGE = "archive_member_too_large"
    ARCHIVE_BUDGET_EXCEEDED = "archive_budget_exceeded"  # the archive's byte total or wall-clock budget ran out
    ARCHIVE_LINK = "archive_link"  # symbolic and hard links are never materialised
    ARCHIVE_SPECIAL_MEMBER = "archive_special_member"  # devices, FIFOs, other non-regular members
    ARCHIVE_DUPLICATE_MEMBER = "archive_duplicate_member"  # a second member with the same path
    # package registries (benchsmith/registries): no answer, an answer outside what a registry may say, no source
    # artifact for the version, an artifact whose bytes are not the ones the registry's digest names
    REGISTRY_UNREACHABLE = "registry_unreachable"
    REGISTRY_RESPONSE_INVALID = "registry_response_invalid"
    REGISTRY_NO_SOURCE_ARTIFACT = "registry_no_source_artifact"
    DIGEST_MISMATCH = "artifact_digest_mismatch"
    # repository filters
    LICENSE_NOT_PERMISSIVE = "license_not_permissive"
    LICENSE_MISSING = "license_missing"
    CREATED_BEFORE = "created_before"
    CREATED_DATE_UNKNOWN = "created_date_unknown"
    RELEASED_BEFORE = "released_before"  # --released-after: this version was published before the cut-off
    RELEASE_DATE_UNKNOWN = "release_date_unknown"  # --released-after on a source with no release date
    LANGUAGE_SHARE_TOO_LOW = "language_share_too_low"  # collect: too few of the files are the language's
    TOO_FEW_FILES = "too_few_files"
    TOO_MANY_FILES = "too_many_files"
    REPO_TOO_LARGE = "repo_too_large"
    NO_SOURCE_FILES = "no_source_files"
    # files
    SYMLINK_OUTSIDE = "symlink_outside_repository"
    SYMLINK = "symlink"
    BINARY_FILE = "binary_file"
    NOT_UTF8 = "not_utf8"
    FILE_TOO_LARGE = "file_too_large"
    SYNTAX_ERROR = "syntax_error"
    UNSAFE_PATH = "unsafe_path"
    UNSAFE_FILE_NAME = "unsafe_file_name"  # a name a tool's argument or list syntax could read differently
    # a repository configuration value (csproj, tsconfig, go.mod) outside the grammar of what it must be (a framework
    # moniker, a symbol name, a path inside the repository): refused, the detail names the file's key
    CONFIG_VALUE_REJECTED = "config_value_rejected"
    CONFIG_TOO_LARGE = "config_too_large"  # a configuration file past a parsing cap (size, nesting, elements)
    # toolchain
    TOOL_TIMEOUT = "toolchain_timeout"
    TOOL_CRASH = "toolchain_crash"
    TOOL_MISSING = "toolchain_missing"
    TOOL_MEMORY = "toolchain_memory_limit"  # the toolchain's process tree hit its memory limit (confined runs)
    TOOLCHAIN_CANNOT_PARSE = "toolchain_cannot_parse"
    UNSUPPORTED_SYNTAX = "unsupported_syntax"  # a construct no safe rewrite handles; the detail names it
    NO_CROSSFILE_REFS = "no_crossfile_refs"
    SYMBOL_NOT_IN_REPOSITORY = "symbol_not_defined_in_repository"
    # examples
    CURSOR_NOT_FOUND = "cursor_not_found"
    GROUNDTRUTH_TOO_SHORT = "groundtruth_too_short"
    GROUNDTRUTH_TOO_LONG = "groundtruth_too_long"
    PROMPT_TOO_SHORT = "prompt_too_short"
    DUPLICATE_GROUNDTRUTH = "duplicate_groundtruth"
    GROUNDTRUTH_IN_PROMPT = "groundtruth_in_prompt"
    SAME_STATEMENT = "same_statement"  # only with --first-reference-per-statement
    DUPLICATE_REFERENCE = "duplicate_reference"
    KIND_NOT_SELECTED = "reference_kind_not_selected"  # --kinds leaves this kind of reference out
    UNSCORABLE_GROUNDTRUTH = "unscorable_groundtruth"
    PREDICTABLE_WITHOUT_CROSSFILE = "predictable_without_crossfile"
    # model-free predictability screens (builders/cceval/screens.py)
    PREDICTABLE_BY_COPY = "predictable_by_copy"
    GROUNDTRUTH_VOCABULARY_IN_FILE = "groundtruth_vocabulary_in_file"
    ECHOES_ENCLOSING_NAME = "echoes_enclosing_name"
    GROUNDTRUTH_VOCABULARY_WITH_IMPORTS = "groundtruth_vocabulary_with_imports"
    PREDICTABLE_BY_ANALOGY = "predictable_by_analogy"
    LOW_SURPRISAL = "low_surprisal"
    FIRST_NAME_IN_FILE = "first_name_in_file"
    # sampling (--max-per-repo): a kept example left out of the seeded sample
    SAMPLED_OUT = "sampled_out"
    # humanext
    REFERENCE_FAILS_TESTS = "reference_fails_tests"
    PAIR_UNRENDERABLE = "pair_unrenderable"  # a perturbation or setting the pair's text cannot take (detail: which)
    INTERNAL_ERROR = "internal_error"
