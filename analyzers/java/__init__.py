"""Java: file-local stub classes, one javac analysis of the original tree and one of the stubbed tree, diff.

Each file's top-level types get empty *nested* types named after the project types the file uses (its single-type
imports of project classes, the project types of its on-demand imports and the same-package types it mentions),
which shadow them inside the class body (``stubs``).  javac is driven through a tiny program of our own
(``driver/BenchsmithJavac.java``, compiled once per JDK into a cache directory) that prints diagnostics as JSON
lines with their key and exact UTF-16 offsets (``driver``).  ``-XDshould-stop.ifError=FLOW`` keeps javac
attributing every class after the first error (the original tree of a real project is full of errors from missing
libraries; the diff removes them).

The original run also prints every name javac resolved to a declaration in another file of the project, with the
kind its place gives it (type, constructor, annotation, heritage, member, inherited member) and the declaration's
lines (``resolved``); the stubbed run's new errors mark the same places or more.

The package by job: ``scan`` (what a file declares and uses; the project index), ``stubs`` (the stubbed texts),
``driver`` (the driver's source, javac options and output), ``attribute`` (a new diagnostic -> a reference),
``resolved`` (a resolved name -> a reference), ``lombok`` (accessors Lombok generates, from the original run's
errors), ``escapes`` (unicode escapes: javac's reading vs the written text)
and ``analyzer`` (``JavaAnalyzer``: the recipe's steps and the javac processes).
"""

from benchsmith.analyzers.java.analyzer import JavaAnalyzer
from benchsmith.analyzers.java.attribute import javac_ref, location_type
from benchsmith.analyzers.java.driver import JAVAC_OPTIONS, JVM_OPTIONS, parse_driver_output
from benchsmith.analyzers.java.scan import JavaFileInfo, JavaIndex, JavaType, scan_java
from benchsmith.analyzers.java.stubs import JavaStubs, plan_stubs

__all__ = ["JAVAC_OPTIONS", "JVM_OPTIONS", "JavaAnalyzer", "JavaFileInfo", "JavaIndex", "JavaStubs", "JavaType",
           "javac_ref", "location_type", "parse_driver_output", "plan_stubs", "scan_java"]
