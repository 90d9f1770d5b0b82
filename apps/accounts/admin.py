"""The admin's pages for organizations, tokens, memberships and the audit trail; a token's digest
is read-only."""

from django.contrib import admin

from apps.accounts.models import ApiToken, Organization

admin.site.register(Organization)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "org", "name", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("prefix", "digest", "created_at", "last_used_at")
