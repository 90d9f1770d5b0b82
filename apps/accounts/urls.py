from django.urls import path

from apps.accounts import views

app_name = "accounts"
urlpatterns = [
    path("", views.org_home, name="org-home"),
    path("new/", views.org_create, name="org-create"),
    path("<int:org_id>/switch/", views.org_switch, name="org-switch"),
    path("invite/", views.invite_create, name="invite-create"),
    path("join/<str:key>/", views.invite_accept, name="invite-accept"),
    path("invitations/<int:invitation_id>/revoke/", views.invite_revoke, name="invite-revoke"),
    path("members/<int:membership_id>/remove/", views.member_remove, name="member-remove"),
    path("members/<int:membership_id>/role/", views.member_role, name="member-role"),
    path("tokens/", views.token_create, name="token-create"),
    path("tokens/<int:token_id>/revoke/", views.token_revoke, name="token-revoke"),
    path("runs/<int:run_id>/publish/", views.run_publish, name="run-publish"),
    path("runs/<int:run_id>/unpublish/", views.run_unpublish, name="run-unpublish"),
]
