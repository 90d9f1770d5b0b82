from django.urls import path

from apps.regressions import views

app_name = "regressions"
urlpatterns = [
    path("", views.regression_list, name="list"),
    path("<int:change_point_id>/", views.regression_detail, name="detail"),
    path("<int:change_point_id>/acknowledge/", views.regression_acknowledge, name="acknowledge"),
    path("subscriptions/", views.subscription_list, name="subscriptions"),
]
