"""`manage.py ensure_admin` (run by `make run`): creates one admin account when there is no
superuser, prints its generated password once and keeps it in the data directory (0600);
run again, it creates nothing, changes nothing and points at the kept password."""

from __future__ import annotations

import io
import re
import stat
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command


@pytest.fixture
def data_dir(settings, tmp_path: Path) -> Path:
    """A data directory of the test's own: the project's var/ is never written. (Passwords
    are hashed cheaply here: the command does not depend on the hasher.)"""
    settings.DATA_DIR = tmp_path
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return tmp_path


def ensure_admin(*args: str) -> str:
    out = io.StringIO()
    call_command("ensure_admin", *args, stdout=out)
    return out.getvalue()


def printed_password(output: str) -> str:
    match = re.search(r"^\s*password: (\S+)$", output, re.MULTILINE)
    assert match, output
    return match.group(1)


@pytest.mark.django_db
def test_it_creates_an_admin_and_prints_a_password_that_logs_in(data_dir: Path) -> None:
    output = ensure_admin()
    admin = User.objects.get()
    assert admin.username == "admin"
    assert admin.is_superuser
    assert admin.is_staff
    assert "username: admin" in output
    password = printed_password(output)
    assert len(password) >= 16
    assert admin.check_password(password)


@pytest.mark.django_db
def test_it_keeps_the_password_in_the_data_directory_readable_only_by_its_owner(
    data_dir: Path,
) -> None:
    password = printed_password(ensure_admin())
    kept = data_dir / "initial_admin_password"
    assert kept.read_text().strip() == password
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert str(kept) in ensure_admin()  # the second run says where it is


@pytest.mark.django_db
def test_a_second_run_creates_nothing_and_keeps_the_password(data_dir: Path) -> None:
    password = printed_password(ensure_admin())
    output = ensure_admin()
    assert User.objects.count() == 1
    assert User.objects.get().check_password(password)
    assert "Log in at http://127.0.0.1:8000/ with your admin account." in output
    assert password not in output  # printed once only


@pytest.mark.django_db
def test_an_existing_superuser_means_no_new_account_and_no_password_file(
    data_dir: Path, alice: User
) -> None:
    output = ensure_admin()
    assert list(User.objects.values_list("username", flat=True)) == ["alice"]
    assert not (data_dir / "initial_admin_password").exists()
    assert "password" not in output


@pytest.mark.django_db
def test_it_takes_the_username_and_url_given(data_dir: Path) -> None:
    output = ensure_admin("--username", "root", "--url", "https://memory.example.com/")
    assert User.objects.get().username == "root"
    assert "Log in at https://memory.example.com/ as" in output
    assert "username: root" in output


@pytest.mark.django_db
def test_a_kept_password_is_reused_when_the_admin_is_created_again(data_dir: Path) -> None:
    first = printed_password(ensure_admin())
    User.objects.all().delete()  # say, a fresh database with the same data directory
    assert printed_password(ensure_admin()) == first
    assert User.objects.get().check_password(first)
