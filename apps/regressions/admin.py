"""The admin's pages for change points, subscriptions, alerts and deliveries."""

from django.contrib import admin

from apps.regressions.models import Alert, ChangePoint, Delivery, Subscription


@admin.register(ChangePoint)
class ChangePointAdmin(admin.ModelAdmin):
    list_display = ("id", "direction", "metric", "relative", "first_after_at", "org", "current")
    list_filter = ("direction", "metric", "current")
    raw_id_fields = ("deployment", "before_run", "after_run", "scenario")


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    list_display = ("id", "org", "channel", "target", "active")
    exclude = ("secret",)


@admin.register(Alert)
class AlertAdmin(admin.ModelAdmin):
    list_display = ("id", "subscription", "change_point", "status", "attempts", "sent_at")
    raw_id_fields = ("subscription", "change_point")


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ("id", "alert", "attempt", "at", "ok", "status_code")
    raw_id_fields = ("alert",)
