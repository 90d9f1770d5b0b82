"""The admin's pages for published claims, their flips, subscriptions and alerts."""

from django.contrib import admin

from apps.claims.models import ClaimAlert, ClaimFlip, ClaimSubscription, PublishedClaim


@admin.register(PublishedClaim)
class PublishedClaimAdmin(admin.ModelAdmin):
    list_display = ("slug", "published_on", "kind", "side_a", "side_b", "claimed_ratio")


@admin.register(ClaimFlip)
class ClaimFlipAdmin(admin.ModelAdmin):
    list_display = ("claim", "at", "cause", "price_set")


@admin.register(ClaimSubscription)
class ClaimSubscriptionAdmin(admin.ModelAdmin):
    list_display = ("org", "channel", "target", "claim", "active")


@admin.register(ClaimAlert)
class ClaimAlertAdmin(admin.ModelAdmin):
    list_display = ("flip", "subscription", "status", "attempts", "sent_at")
