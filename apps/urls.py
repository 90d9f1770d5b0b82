from django.contrib import admin
from django.urls import path

from apps.api.api import api
from apps.runs import views as run_views

urlpatterns = [
    path("", run_views.run_index, name="home"),
    path("runs/<int:run_id>/", run_views.run_detail, name="run-detail"),
    path("api/v1/", api.urls),
    path("admin/", admin.site.urls),
]
