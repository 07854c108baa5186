"""Dashboard users see namespaces through their memberships; outsiders get NotFound."""

import pytest
from django.contrib.auth.models import User

from apps.audit.actors import Actor
from apps.namespaces.models import MembershipRole
from apps.namespaces.selectors import namespace_for_user, namespaces_for_user, user_role
from apps.namespaces.services import membership_set
from memoryhub.exceptions import NotFound
from tests.conftest import Tenant


@pytest.fixture
def bob(db: None) -> User:
    return User.objects.create_user("bob", password="bob-password-1")


@pytest.fixture
def charlie(db: None) -> User:
    return User.objects.create_user("charlie", password="charlie-password-1")


@pytest.fixture
def bob_views_acme(acme: Tenant, bob: User) -> None:
    membership_set(
        actor=Actor.system("tests"), namespace=acme.namespace, user=bob, role=MembershipRole.VIEWER
    )


def test_a_member_sees_only_their_namespaces(
    acme: Tenant, globex: Tenant, bob: User, bob_views_acme
) -> None:
    assert list(namespaces_for_user(bob)) == [acme.namespace]
    assert namespace_for_user(bob, "acme") == acme.namespace
    with pytest.raises(NotFound):
        namespace_for_user(bob, "globex")


def test_an_outsider_sees_nothing(acme: Tenant, charlie: User) -> None:
    assert list(namespaces_for_user(charlie)) == []
    with pytest.raises(NotFound):
        namespace_for_user(charlie, "acme")
    assert user_role(charlie, acme.namespace) is None


def test_a_role_below_the_minimum_is_out_of_scope(acme: Tenant, bob: User, bob_views_acme) -> None:
    with pytest.raises(NotFound):
        namespace_for_user(bob, "acme", min_role=MembershipRole.EDITOR)
    assert user_role(bob, acme.namespace) == MembershipRole.VIEWER


def test_a_superuser_sees_every_namespace(acme: Tenant, globex: Tenant, alice: User) -> None:
    assert set(namespaces_for_user(alice)) == {acme.namespace, globex.namespace}
    assert user_role(alice, globex.namespace) == MembershipRole.OWNER
